"""The projections' own tables, one module per table: the SQL the folds in
``backend/projections/`` run (read a row, write a row, read the events a rebuild folds,
replace a tenant's rows). The folds themselves stay plain functions in projections/."""
