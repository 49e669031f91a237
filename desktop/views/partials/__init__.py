"""Table models and small widgets that belong to one view each."""
