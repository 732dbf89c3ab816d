"""Use-cases that the CLI and the app both call, so a page and a command never disagree on what a run does."""
