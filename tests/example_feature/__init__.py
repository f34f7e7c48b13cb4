"""The worked example of docs/architecture.md: a whole feature in one small package."""
