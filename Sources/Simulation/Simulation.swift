// The simulated radio world.
