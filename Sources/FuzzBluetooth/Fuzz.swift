// libFuzzer entry points
