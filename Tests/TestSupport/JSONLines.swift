import Foundation
import Testing

/// The objects of `--json` output, one JSON object a line; a line that is not one fails the test.
public func jsonLines(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { line in
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any], "not a JSON object: \(line)", sourceLocation: sourceLocation)
    }
}

/// The objects a command wrote to standard output, one JSON object a line.
public func jsonObjects(_ result: CommandResult, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
    try jsonLines(result.stdout, sourceLocation: sourceLocation)
}
