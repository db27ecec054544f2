// Tests for Ranging.
