@main enum RangingBenchmark { static func main() {} }
