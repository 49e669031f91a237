"""Apply: pure domain logic for applications (targets, packets, challenges, email).

No Temporal and no database here: activities call these functions and persist the
results; tests call them directly."""
