/// Drops from the front of `times` (ascending) and its parallel `values` the readings older
/// than `span` s at `time`, and the oldest beyond `capacity`. Returns the time of the latest
/// reading dropped for room rather than age (nil when none was): the readings kept may then
/// begin later than the span they stand for (`AtHandDetector`, `TrendDetector`).
func trimReadings(_ times: inout [Double], _ values: inout [Double], at time: Double, span: Double, capacity: Int) -> Double? {
    var drop = 0
    var droppedForRoom: Double?
    while drop < times.count && (time - times[drop] > span || times.count - drop > capacity) {
        if time - times[drop] <= span { droppedForRoom = times[drop] }
        drop += 1
    }
    if drop > 0 {
        times.removeFirst(drop)
        values.removeFirst(drop)
    }
    return droppedForRoom
}
