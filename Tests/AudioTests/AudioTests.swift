// Tests for Audio.
