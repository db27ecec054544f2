@main enum VoiceBenchmark { static func main() {} }
