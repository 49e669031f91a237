"""Qt item models the views display."""
