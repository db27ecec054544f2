import Ranging

/// What the pages show, given by the appliance (pure values).
public struct CheckItem: Sendable, Equatable {
    public enum Status: String, Sendable { case ok, warning, problem }
    public var status: Status
    public var text: String
    public var fix: String?

    public init(status: Status, text: String, fix: String? = nil) {
        self.status = status
        self.text = text
        self.fix = fix
    }
}

public struct HuntView: Sendable, Equatable {
    public var running = true
    public var lastSaid: String?
    public var detector = 0.0
    /// "Hunter 1 found treasure 2 at 68 s", in order.
    public var standings: [String] = []
    public var volumeDB = 0.0
    public var trailSteps = 0

    public init() {}
}

public enum RehearsalState: Sendable, Equatable {
    case idle
    case running(started: Double)
    case ready(seconds: Double)
    case failed(String)

    public var word: String {
        switch self {
        case .idle: "idle"
        case .running: "running"
        case .ready: "ready"
        case .failed: "failed"
        }
    }
}

public struct BoxView: Sendable, Equatable {
    public var beacon: String
    public var reward: String?
    public var greetings: [String] = []
    public var standings: [String] = []
    public var paired = false

    public init(beacon: String) { self.beacon = beacon }
}

/// The parent's pages: plain HTML, a phone's width first, forms that work without
/// JavaScript (`app.js` only adds the live views). Every text from outside is escaped.
public enum Pages {
    public struct Chrome {
        public var csrf: String?
        public var isBox = false
        public init(csrf: String?, isBox: Bool = false) {
            self.csrf = csrf
            self.isBox = isBox
        }
    }

    static func layout(_ title: String, _ chrome: Chrome, active: String, live: Bool = false, _ body: String) -> String {
        let links: [(String, String)] =
            chrome.isBox
            ? [("/box", "Box"), ("/ready", "Ready?")]
            : [("/ready", "Ready?"), ("/tags", "Tags"), ("/trail", "Trail"), ("/rehearse", "Rehearse"), ("/hunt", "Hunt")]
        let nav =
            chrome.csrf == nil
            ? ""
            : "<nav aria-label=\"Pages\">"
                + links.map { "<a href=\"\($0.0)\"\($0.0 == active ? " aria-current=\"page\"" : "")>\($0.1)</a>" }.joined() + "</nav>"
        let script = live ? "<script src=\"/app.js\" defer></script>" : ""
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.escape(title)) · pirate-hunter</title><link rel="stylesheet" href="/style.css">\(script)</head>
            <body><header><p class="brand">Pirate hunter</p>\(nav)</header><main><h1>\(HTML.escape(title))</h1>
            \(body)
            </main></body></html>
            """
    }

    static func csrfField(_ chrome: Chrome) -> String {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(HTML.escape(chrome.csrf ?? ""))\">"
    }

    static func form(_ action: String, _ chrome: Chrome, id: String? = nil, _ inner: String) -> String {
        "<form method=\"post\" action=\"\(action)\"\(id.map { " id=\"\($0)\"" } ?? "")>\(csrfField(chrome))\(inner)</form>"
    }

    // MARK: - The code

    public static func login(problem: String?, isBox: Bool = false) -> String {
        let where_ = isBox ? "shown on the box's screen" : "the hunter said at start (and `pirate-hunter check` prints)"
        let note = problem.map { "<p class=\"problem\" role=\"alert\">\(HTML.escape($0))</p>" } ?? ""
        return layout(
            "Enter the setup code", Chrome(csrf: nil, isBox: isBox), active: "",
            """
            <p>Type the 6-digit code \(HTML.escape(where_)).</p>\(note)
            <form id="login" method="post" action="/login"><label for="code">Setup code</label>
            <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" maxlength="12" required>
            <button id="enter" type="submit">Enter</button></form>
            """)
    }

    // MARK: - Ready?

    public static func ready(_ checks: [CheckItem], address: String?, refreshing: Bool = false, _ chrome: Chrome) -> String {
        let items = checks.map { item in
            "<li class=\"check \(item.status.rawValue)\"><span class=\"status\">\(item.status == .ok ? "ok" : item.status == .warning ? "check" : "fix")</span> \(HTML.escape(item.text))"
                + (item.fix.map { "<br><span class=\"fix\">\(HTML.escape($0))</span>" } ?? "") + "</li>"
        }.joined()
        let here = address.map { "<p>This page: <strong>\(HTML.escape($0))</strong></p>" } ?? ""
        let renew = chrome.isBox ? "" : form("/code", chrome, "<button type=\"submit\">New setup code (signs everyone else out)</button>")
        let refresh = refreshing ? "<meta http-equiv=\"refresh\" content=\"2\">" : ""
        return layout(
            "Ready?", chrome, active: "/ready",
            "\(refresh)\(here)<ul id=\"checks\">\(items)</ul>\(renew)"
                + form("/logout", chrome, "<button type=\"submit\" class=\"quiet\">Sign out</button>"))
    }

    // MARK: - Tags in view

    public static func tagRows(_ tags: [TagsInView.Tag], now: Double, _ chrome: Chrome) -> String {
        tags.map { tag in
            let distance = tag.distance.map { "\(HTML.number($0.meters)) m ± \(HTML.number($0.sigma))" } ?? "-"
            let level = tag.level.map { "\(HTML.number($0, decimals: 0)) dBm" } ?? "-"
            let power = tag.calibratedPower.map { "calibrated \($0)" } ?? "power \(tag.advertisedPower)"
            let label = HTML.escape(tag.name ?? "")
            let id = HTML.escape(tag.id)
            return """
                <tr class="tag" data-id="\(id)"><td class="name">\(HTML.escape(tag.label))</td>\
                <td class="id"><code>\(id)</code> <small>\(power)</small></td><td class="level">\(level)</td>\
                <td class="distance">\(distance) <small>\(HTML.escape(tag.proximity.rawValue)), \(HTML.number(max(0, now - tag.lastHeard)))s</small></td>\
                <td class="actions">\(form("/tags/name", chrome, "<input type=\"hidden\" name=\"id\" value=\"\(id)\"><label>Name <input name=\"name\" value=\"\(label)\" maxlength=\"40\"></label><button type=\"submit\">Save name</button>"))\
                \(form("/tags/calibrate", chrome, "<input type=\"hidden\" name=\"id\" value=\"\(id)\"><button type=\"submit\" aria-label=\"Calibrate \(label.isEmpty ? id : label) at 1 m\">Calibrate at 1 m</button>"))</td></tr>
                """
        }.joined(separator: "\n")
    }

    public static func tags(_ tags: [TagsInView.Tag], nearest: TagsInView.Nearest?, message: String?, now: Double, _ chrome: Chrome) -> String {
        let result: String
        switch nearest {
        case let .tag(tag)?: result = "Nearest: <strong>\(HTML.escape(tag.name ?? tag.id))</strong> <code>\(HTML.escape(tag.id))</code>"
        case .unclear?: result = "Not clear yet: hold one tag right against the Pi, the others away."
        case .none?: result = "No tag heard."
        case nil: result = ""
        }
        let note = message.map { "<p class=\"note\" role=\"status\">\(HTML.escape($0))</p>" } ?? ""
        return layout(
            "Tags in view", chrome, active: "/tags", live: true,
            """
            \(note)<p>Strongest first. To find which tag is which, hold it against the Pi and press:</p>
            <form method="get" action="/tags"><input type="hidden" name="nearest" value="1"><button id="nearest" type="submit">Which tag is against the Pi?</button></form>
            <p id="nearest-result" role="status">\(result)</p>
            <p>To calibrate a tag, put it where it will be hidden and hold the Pi over it as a child will when they find it (about 1 m away) for half a minute, then press its Calibrate button.</p>
            <div class="scroll"><table id="tags"><thead><tr><th scope="col">Name</th><th scope="col">Tag</th><th scope="col">Level</th><th scope="col">Distance</th><th scope="col">Set up</th></tr></thead>
            <tbody>\(tagRows(tags, now: now, chrome))</tbody></table></div>
            """)
    }

    // MARK: - Trail

    public enum TrailResult: Equatable {
        case saved(String)
        case problems([String])
        case note(String)
    }

    public static func trail(_ draft: TrailDraft, tags: [TagsInView.Tag], result: TrailResult?, canSave: Bool, _ chrome: Chrome) -> String {
        var out = ""
        switch result {
        case let .saved(text)?: out += "<div id=\"result\" class=\"ok\" role=\"status\"><p>\(HTML.escape(text))</p></div>"
        case let .problems(list)?:
            out += "<div id=\"result\" class=\"problem\" role=\"alert\"><p>Not saved:</p><ul>"
                + list.map { "<li class=\"problem\">\(HTML.escape($0))</li>" }.joined() + "</ul></div>"
        case let .note(text)?: out += "<div id=\"result\" class=\"ok\" role=\"status\"><p>\(HTML.escape(text))</p></div>"
        case nil: break
        }
        if !canSave { out += "<p class=\"problem\">The hunter was started without a configuration file (--config): the trail can be tried, not saved.</p>" }
        var steps = ""
        for (n, step) in draft.steps.enumerated() {
            var choices = tags.map { tag in
                (id: tag.id, label: tag.label + (tag.level.map { " · \(HTML.number($0, decimals: 0)) dBm" } ?? "")
                    + (tag.distance.map { " · about \(HTML.number($0.meters)) m" } ?? "") + " · " + tag.id.prefix(8) + "…")
            }
            if !step.region.isEmpty, !choices.contains(where: { $0.id == step.region }) { choices.insert((step.region, step.region + " (not in view)"), at: 0) }
            if step.region.isEmpty { choices.insert(("", "choose a tag"), at: 0) }
            let options = choices.map { "<option value=\"\(HTML.escape($0.id))\"\($0.id == step.region ? " selected" : "")>\(HTML.escape($0.label))</option>" }.joined()
            let p = "step-\(n)"
            steps += """
                <fieldset class="step"><legend>Treasure \(n + 1)</legend>
                <label for="\(p)-region">Tag</label><select id="\(p)-region" name="\(p)-region">\(options)</select>
                <label for="\(p)-clue">Clue</label><textarea id="\(p)-clue" name="\(p)-clue" rows="2" maxlength="400">\(HTML.escape(step.clue))</textarea>\
                \(step.clueWAV != nil && step.clue.isEmpty ? "<p><small>Recorded clue: \(HTML.escape(step.clueWAV ?? ""))</small></p>" : "")
                <label for="\(p)-hint">Hint (when stuck)</label><input id="\(p)-hint" name="\(p)-hint" value="\(HTML.escape(step.hint))" maxlength="400">
                <label for="\(p)-found">Found line</label><input id="\(p)-found" name="\(p)-found" value="\(HTML.escape(step.found))" maxlength="400">
                <label for="\(p)-reward">Reward</label><input id="\(p)-reward" name="\(p)-reward" value="\(HTML.escape(step.reward))" maxlength="120">
                <div class="row"><button type="submit" name="action" value="say-\(n)">Say the clue on the speaker</button>\
                <button type="submit" name="action" value="remove-\(n)" class="quiet">Remove treasure \(n + 1)</button></div></fieldset>
                """
        }
        func option(_ value: String, _ label: String, _ current: String) -> String {
            "<option value=\"\(value)\"\(value == current ? " selected" : "")>\(label)</option>"
        }
        out += form(
            "/trail", chrome, id: "trail",
            """
            \(steps)<button type="submit" name="action" value="add">Add a treasure</button>
            <fieldset><legend>The hunt</legend>
            <label for="order">Order</label><select id="order" name="order">\(option("in_order", "in order", draft.order))\(option("any_order", "any order", draft.order))</select>
            <label for="mode">Mode</label><select id="mode" name="mode">\(option("solo", "solo", draft.mode))\(option("race", "race (several hunters)", draft.mode))</select>
            <label for="hunters">Other hunters' numbers (a race), e.g. 2, 3</label><input id="hunters" name="hunters" value="\(HTML.escape(draft.hunters))" maxlength="100">
            </fieldset>
            <div class="row"><button type="submit" name="action" value="save" class="main"\(canSave ? "" : " disabled")>Save and use this trail</button>\
            <button type="submit" name="action" value="keep">Keep as a draft</button></div>
            """)
        return layout("Trail", chrome, active: "/trail", out)
    }

    // MARK: - Rehearse

    public static func rehearse(_ state: RehearsalState, steps: Int, now: Double, _ chrome: Chrome) -> String {
        let status: String
        switch state {
        case .idle: status = "idle"
        case let .running(started): status = "running (\(HTML.number(max(0, now - started), decimals: 0)) s)"
        case let .ready(seconds): status = "ready: \(HTML.number(seconds, decimals: 0)) s of hunt"
        case let .failed(why): status = "failed: \(HTML.escape(why))"
        }
        let download = if case .ready = state { "<p><a id=\"download\" href=\"/rehearsal.wav\" download=\"rehearsal.wav\">Download the rehearsal (WAV)</a></p>" } else { "" }
        let refresh = if case .running = state { "<meta http-equiv=\"refresh\" content=\"2\">" } else { "" }
        return layout(
            "Rehearse", chrome, active: "/rehearse",
            """
            \(refresh)<p>A simulated child walks your trail (\(steps) treasure\(steps == 1 ? "" : "s"), as last put on the Trail page) and the hunt says everything it would.</p>
            <p id="rehearsal" role="status" data-state="\(state.word)">\(status)</p>\(download)
            \(form("/rehearse", chrome, "<div class=\"row\"><button type=\"submit\" name=\"action\" value=\"wav\" class=\"main\">Rehearse to a WAV file</button><button type=\"submit\" name=\"action\" value=\"speaker\">Rehearse and play it on the speaker</button></div>"))
            """)
    }

    // MARK: - Hunt

    public static func huntDetails(_ view: HuntView) -> String {
        """
        <p>Hunt: <strong id="running">\(view.running ? "running" : "stopped")</strong>, \(view.trailSteps) treasure\(view.trailSteps == 1 ? "" : "s")</p>
        <p>Just said: <q id="said">\(HTML.escape(view.lastSaid ?? "-"))</q></p>
        <p>Detector: <span id="detector">\(HTML.number(view.detector))</span> clicks a second</p>
        <h2>Standings</h2><ol id="standings">\(view.standings.map { "<li>\(HTML.escape($0))</li>" }.joined())</ol>
        """
    }

    public static func hunt(_ view: HuntView, _ chrome: Chrome) -> String {
        layout(
            "Hunt", chrome, active: "/hunt", live: true,
            """
            <div id="hunt-live">\(huntDetails(view))</div>
            \(form("/hunt", chrome, "<div class=\"row\"><button type=\"submit\" name=\"action\" value=\"start\">Start</button><button type=\"submit\" name=\"action\" value=\"restart\">Restart from the first clue</button><button type=\"submit\" name=\"action\" value=\"stop\">Stop</button></div>"))
            \(form("/volume", chrome, "<label for=\"volume_db\">Volume (dB, -40 to 12)</label><input id=\"volume_db\" name=\"volume_db\" type=\"number\" min=\"-40\" max=\"12\" step=\"1\" value=\"\(HTML.number(view.volumeDB, decimals: 0))\"><button type=\"submit\">Set and say a test line</button>"))
            """)
    }

    // MARK: - The box

    public static func box(_ view: BoxView, _ chrome: Chrome) -> String {
        layout(
            "Treasure box", chrome, active: "/box",
            """
            <p>Beacon: <code id="beacon">\(HTML.escape(view.beacon))</code> (\(view.paired ? "paired: game key set" : "not paired: no game key"))</p>
            <p>Reward: <strong id="reward">\(HTML.escape(view.reward ?? "none"))</strong></p>
            <h2>Greetings</h2><ul id="greetings">\(view.greetings.map { "<li>\(HTML.escape($0))</li>" }.joined())</ul>
            <h2>Standings</h2><ol id="standings">\(view.standings.map { "<li>\(HTML.escape($0))</li>" }.joined())</ol>
            \(form("/box", chrome, """
                <p>A new round (the hunters restarted for another hunt): the standings and greetings start again.</p>
                <button type="submit" name="action" value="new-round">New round</button>
                """))
            """)
    }

    public static func notFound() -> WebResponse {
        WebResponse(status: 404, text: layout("Not here", Chrome(csrf: nil), active: "", "<p><a href=\"/\">Back</a></p>"))
    }
}
