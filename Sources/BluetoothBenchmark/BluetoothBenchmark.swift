@main enum BluetoothBenchmark { static func main() {} }
