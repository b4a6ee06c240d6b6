"""Is it slower? The statistics and rules a gate or a comparison of saved runs judges by, its threshold, its ending."""
