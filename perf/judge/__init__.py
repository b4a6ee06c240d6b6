"""Is it slower? How a gate or a comparison of saved runs reads its threshold and how it ends."""
