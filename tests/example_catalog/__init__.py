"""The worked example of docs/remotes.md's "Writing a catalog factory": a catalog kept in one JSON file."""
