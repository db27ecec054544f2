// The Ranging layer: see issues; sources arrive with its work.
