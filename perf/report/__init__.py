"""What the saved runs say: each benchmark as a row, the analysis, the Markdown report and its plots, the terminal summary."""
