"""Qt-free presentation helpers: plain words for API answers."""
