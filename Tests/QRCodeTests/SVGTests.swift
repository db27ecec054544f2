import Foundation
import QRCode
import Testing
import TestSupport

/// The few facts the SVG renderer promises, read back from its text.
struct ParsedSVG {
    var width: Int
    var height: Int
    var viewBox: [Int]
    var background: String
    var path: String

    init(_ svg: String) throws {
        func attribute(_ name: String, in text: Substring) throws -> String {
            let range = try #require(text.range(of: " \(name)=\""), "no \(name) attribute")
            let rest = text[range.upperBound...]
            let end = try #require(rest.firstIndex(of: "\""))
            return String(rest[..<end])
        }
        let root = try #require(svg.split(separator: ">").first)
        width = try #require(Int(attribute("width", in: root)))
        height = try #require(Int(attribute("height", in: root)))
        viewBox = try attribute("viewBox", in: root).split(separator: " ").map { try #require(Int($0)) }
        let rect = try #require(svg.range(of: "<rect").map { svg[$0.lowerBound...] })
        background = try attribute("fill", in: rect) + " " + attribute("width", in: rect) + "x" + attribute("height", in: rect)
        let pathElement = try #require(svg.range(of: "<path").map { svg[$0.lowerBound...] })
        #expect(try attribute("fill", in: pathElement) == "#000000")
        path = try attribute("d", in: pathElement)
    }

    /// Fills a `side`×`side` grid from the path's `M<x> <y>h<n>v1h-<n>z` runs.
    func grid(side: Int) throws -> [[Bool]] {
        var grid = Array(repeating: Array(repeating: false, count: side), count: side)
        for run in path.split(separator: "z") {
            let numbers = run.split(whereSeparator: { "Mhv ".contains($0) }).map { Int($0) }
            try #require(numbers.count == 5 && run.hasPrefix("M"), "bad run \(run)")
            let x = try #require(numbers[0]), y = try #require(numbers[1]), n = try #require(numbers[2])
            try #require(numbers[3] == 1 && numbers[4] == -n && n > 0, "run \(run) does not close")
            try #require(run == "M\(x) \(y)h\(n)v1h-\(n)", "run \(run) is not one row high")
            for column in x..<(x + n) {
                try #require(!grid[y][column], "module (\(column), \(y)) drawn twice")
                grid[y][column] = true
            }
        }
        return grid
    }
}

@Suite struct SVGTests {
    @Test(arguments: [(8, 4), (1, 0), (5, 2)])
    func svgReadsBackToTheModules(moduleSize: Int, quietZone: Int) throws {
        let code = try QRCode(encoding: "https://pirate-hunter.example/reward?code=ARRR-2026-GOLD&box=3")
        let svg = code.svg(moduleSize: moduleSize, quietZone: quietZone)
        #expect(svg.hasPrefix("<svg "))
        #expect(svg.contains(" xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        let side = code.size + 2 * quietZone
        let parsed = try ParsedSVG(svg)
        #expect(parsed.viewBox == [0, 0, side, side])
        #expect(parsed.width == side * moduleSize && parsed.height == side * moduleSize)
        #expect(parsed.background == "#ffffff \(side)x\(side)")
        // Dark where the code is dark, light everywhere else, quiet zone included.
        #expect(try parsed.grid(side: side) == expectedInk(code, zone: quietZone, inverted: false))
        #expect(svg == code.svg(moduleSize: moduleSize, quietZone: quietZone))
    }

    @Test func svgIsWellFormedXML() throws {
        // python3 (installed by scripts/deps.sh) parses it with a real XML parser.
        let svg = try QRCode(encoding: "Ye found it! \u{2620} 10% off").svg()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("qrcode-\(getpid()).svg")
        try Data(svg.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let check = "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); print(r.tag, len(r))"
        let result = try Program.run("/usr/bin/env", ["python3", "-c", check, file.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "{http://www.w3.org/2000/svg}svg 2\n")
    }
}
