// The Audio layer: see issues; sources arrive with its work.
