// The Voice layer: see issues; sources arrive with its work.
