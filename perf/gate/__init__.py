"""Whether it got slower: two versions timed on one machine in one job, trials interleaved, judged by paired ratios."""
