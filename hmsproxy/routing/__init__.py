"""Where a call goes and how the names in it change on the way."""
