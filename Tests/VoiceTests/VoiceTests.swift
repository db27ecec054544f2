// Tests for Voice.
