// Radio tests
