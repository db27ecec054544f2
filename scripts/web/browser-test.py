#!/usr/bin/env python3
"""The parent's page in a real browser (issue 26): headless Chromium (Debian's chromium and
chromium-driver) driven by Selenium 4, at a phone's size (390x844) first.

From a fresh start of the simulator world (`hunt --hci simulator --web-port PORT --json
--out OUT.wav`, RUNTIME_DIRECTORY a private directory): the setup code read from
RUNTIME_DIRECTORY/web-code and typed in; the three simulated tags seen on /tags, and seen
to change there without a reload (the live view); a three-step trail built on /trail from
them (a different tag and a clue for each); rehearsed to a WAV, waited for and downloaded
(a RIFF/WAVE with sound in it); saved (the configuration file then holds the trail); the
hunt's --json saying the first step's clue (event_name "clue") after the save; after
SIGTERM, exit 0 and OUT.wav with sound in it.

Every page is photographed at 390x844 and 1280x800 into the artifacts directory (kept;
default .build/web-artifacts), and at both sizes: no horizontal scroll, every control
(input, select, textarea, button) has an accessible name, every image an alt, the page a
<html lang> and a <title>.

usage: scripts/web/browser-test.py [--binary .build/debug/pirate-hunter] [--artifacts DIR] [--keep]
(run with .build/web-venv/bin/python, made by scripts/web/setup.sh). Exit 0, or 1 with one line.
"""
import argparse
import json
import os
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ beside harness.py in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Failure, check, clock  # noqa: E402

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    print("browser-test: FAIL: selenium is not installed here: run scripts/web/setup.sh and use .build/web-venv/bin/python", file=sys.stderr)
    sys.exit(1)

PHONE = (390, 844)
DESKTOP = (1280, 800)
CLUES = [
    "Look where the ship's cat sleeps by day.",
    "Under the plank that creaks the loudest.",
    "Where the cold treasure of milk is kept.",
]

# Every control's accessible name, the way a screen reader finds it (aria-labelledby,
# aria-label, its <label>s, then a button's text or value, then title), images' alt, the
# page's lang and title. Returns a list of what is missing.
A11Y = r"""
const problems = [];
const name = (el) => {
  const by = el.getAttribute('aria-labelledby');
  if (by) { const t = by.split(/\s+/).map(id => (document.getElementById(id) || {}).textContent || '').join(' ').trim(); if (t) return t; }
  const aria = (el.getAttribute('aria-label') || '').trim(); if (aria) return aria;
  if (el.labels) for (const l of el.labels) { const t = (l.innerText || l.textContent || '').trim(); if (t) return t; }
  if (el.tagName === 'BUTTON') { const t = (el.innerText || el.textContent || '').trim(); if (t) return t; }
  if (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type) && el.value.trim()) return el.value.trim();
  if (el.tagName === 'INPUT' && el.type === 'image' && (el.alt || '').trim()) return el.alt.trim();
  return (el.getAttribute('title') || '').trim();
};
const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.name ? '[name=' + el.name + ']' : '');
for (const el of document.querySelectorAll('input, select, textarea, button')) {
  if (el.tagName === 'INPUT' && el.type === 'hidden') continue;
  if (!name(el)) problems.push(describe(el) + ' has no accessible name');
}
for (const img of document.querySelectorAll('img')) if (!img.hasAttribute('alt')) problems.push('an image (' + img.src + ') has no alt');
if (!(document.documentElement.getAttribute('lang') || '').trim()) problems.push('<html> has no lang');
if (!document.title.trim()) problems.push('the page has no <title>');
return problems;
"""


# The element that sticks out furthest to the right (what makes the page scroll sideways).
WIDEST = r"""
let worst = null, right = 0;
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const range = document.createRange();
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.textContent.trim()) continue;
  range.selectNodeContents(node);
  const r = range.getBoundingClientRect().right;
  if (r > right + 0.5) { right = r; worst = node.parentElement; }
}
for (const el of document.body.querySelectorAll('input, select, textarea, button, img, table, pre')) {
  const r = el.getBoundingClientRect().right;
  if (r > right + 0.5) { right = r; worst = el; }
}
if (!worst) return 'nothing found';
const text = (worst.innerText || worst.textContent || worst.value || '').trim().slice(0, 70);
return worst.tagName.toLowerCase() + (worst.className ? '.' + worst.className : '') + ' to ' + Math.round(right) + ' px: "' + text + '"';
"""


class Browser:
    def __init__(self, base, artifacts, profile):
        self.base = base
        self.artifacts = artifacts
        self.shots = []
        self.problems = []
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                    "--disable-extensions", "--disable-background-networking", "--disable-sync", "--hide-scrollbars",
                    "--window-size=%d,%d" % PHONE):
            options.add_argument(arg)
        # A profile of its own in the run's private directory (nothing at a predictable path).
        options.add_argument("--user-data-dir=" + profile)
        service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_page_load_timeout(20)
        self.size(PHONE)

    def size(self, wh):
        """The viewport exactly wh (a phone's: mobile, as a phone lays out with the viewport meta)."""
        width, height = wh
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": wh == PHONE})

    def open(self, path):
        self.driver.get(self.base + path)
        return self.path()

    def path(self):
        return urllib.parse.urlparse(self.driver.current_url).path

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def finds(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def wait(self, what, condition, timeout=20):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(lambda d: condition())
        except TimeoutException:
            raise Failure("%s: not within %d s (page %s)" % (what, timeout, self.path()))

    def click(self, css):
        element = self.find(css)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def submit_action(self, value):
        """Presses the form's submit button name=action value=VALUE, and waits for the page
        it was on to be replaced (every action posts and is answered with a redirect): a
        wait that follows must not pass on the old page, whose elements then go stale (CI
        once read the trail's selects in the instant between)."""
        buttons = self.finds('button[name="action"][value="%s"]' % value)
        check(buttons, "%s has no button name=action value=%s" % (self.path(), value))
        page = self.find("html")
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", buttons[0])
        buttons[0].click()
        # (Mid-navigation Chromium may answer "node does not belong to the document" instead
        # of "stale": polled again, as CI once failed on it.)
        try:
            WebDriverWait(self.driver, 20, poll_frequency=0.05, ignored_exceptions=(WebDriverException,)).until(
                expected_conditions.staleness_of(page))
        except TimeoutException:
            raise Failure("the action %s: %s was not replaced within 20 s" % (value, self.path()))

    def snap(self, page):
        """Screenshots at both sizes, each checked for horizontal scroll and labels; the
        phone's size again after."""
        for wh in (DESKTOP, PHONE):
            self.size(wh)
            time.sleep(0.15)  # one layout after the resize
            width, scroll = self.driver.execute_script(
                "return [window.innerWidth, document.documentElement.scrollWidth]")
            path = os.path.join(self.artifacts, "%s-%dx%d.png" % (page, wh[0], wh[1]))
            self.driver.save_screenshot(path)
            self.shots.append(path)
            # Recorded, not raised: the walk goes on, and every page's problems are reported.
            if width != wh[0]:
                wide = self.driver.execute_script(WIDEST)
                self.problem("%s at %dx%d is laid out %d px wide (wider content zooms a phone's page out: it scrolls sideways; widest: %s) (%s)" % (
                    page, wh[0], wh[1], width, wide, path))
            elif scroll > width:
                wide = self.driver.execute_script(WIDEST)
                self.problem("%s at %dx%d scrolls sideways: scrollWidth %d > innerWidth %d (widest: %s) (%s)" % (
                    page, wh[0], wh[1], scroll, width, wide, path))
            problems = self.driver.execute_script(A11Y)
            if problems:
                self.problem("%s at %dx%d: %s" % (page, wh[0], wh[1], "; ".join(problems[:5])))

    def problem(self, line):
        print("  problem: " + line, file=sys.stderr)
        self.problems.append(line)

    def session_cookie(self):
        for cookie in self.driver.get_cookies():
            if cookie["name"] == "ph_session":
                return cookie
        return None

    def quit(self):
        try:
            self.driver.quit()
        except WebDriverException:
            pass


def steps_on_page(b):
    return len(b.finds('select[name^="step-"][name$="-region"]'))


def run(a):
    started = clock()
    artifacts = os.path.abspath(a.artifacts)
    os.makedirs(artifacts, exist_ok=True)
    for old in os.listdir(artifacts):
        if old.endswith(".png") or old.endswith(".wav"):
            os.unlink(os.path.join(artifacts, old))
    with harness.Workdir("web-browser-", keep=a.keep) as tmp:
        hunter = harness.Hunter(a.binary, tmp)
        browser = None
        try:
            code = hunter.wait_code(60)
            print("page up on port %d %.1f s after start; code in %s" % (hunter.port, clock() - hunter.started, hunter.runtime))
            browser = Browser("http://localhost:%d" % hunter.port, artifacts, os.path.join(tmp, "profile"))
            flow(browser, hunter, code, artifacts)
            layout_problems = browser.problems
        finally:
            if browser:
                browser.quit()
                print("screenshots (%d):" % len(browser.shots))
                for shot in browser.shots:
                    print("  " + shot)
            status = hunter.stop()
        check(status == 0, "the hunter exited with %s after SIGTERM, not 0: %s" % (status, hunter.stderr_tail()))
        check(os.path.exists(hunter.out), "no %s after the hunter's exit" % hunter.out)
        seconds, peak, rms = harness.wav_stats(hunter.out)
        check(peak > 1000 and rms > 30, "the hunt's %s is silent (%.1f s, peak %d, rms %.0f)" % (hunter.out, seconds, peak, rms))
        print("hunt's --out: %.1f s, peak %d, rms %.0f" % (seconds, peak, rms))
    print("browser test wall time: %.1f s" % (clock() - started))
    check(not layout_problems, "%d page problem(s) (layout, labels): %s" % (len(layout_problems), " || ".join(layout_problems)))
    return
    print("browser test wall time: %.1f s" % (clock() - started))


def flow(b, hunter, code, artifacts):
    # -- The code. Any page without the session goes to /login.
    check(b.open("/tags") == "/login", "GET /tags without a session did not land on /login (%s)" % b.path())
    check(b.finds("form#login") and b.finds("input#code") and b.finds("button#enter"), "/login has no form#login with input#code and button#enter")
    b.snap("login")
    b.find("input#code").send_keys("000000" if code != "000000" else "111111")
    b.click("button#enter")
    b.wait("a .problem after a wrong code", lambda: b.finds(".problem"))
    check(b.session_cookie() is None, "a wrong code gave a ph_session cookie")
    b.snap("login-wrong")
    b.open("/login")
    b.find("input#code").send_keys(code)
    b.click("button#enter")
    b.wait("/ready after the right code", lambda: b.path() == "/ready")
    cookie = b.session_cookie()
    check(cookie and cookie.get("httpOnly"), "the ph_session cookie is missing or not HttpOnly: %r" % cookie)
    check(cookie.get("sameSite") == "Strict", "the ph_session cookie is SameSite=%s, not Strict" % cookie.get("sameSite"))

    # -- Ready? and the navigation.
    check(b.finds("ul#checks li.check"), "/ready has no ul#checks li.check")
    hrefs = {urllib.parse.urlparse(x.get_attribute("href")).path for x in b.finds("nav a")}
    missing = {"/ready", "/tags", "/trail", "/rehearse", "/hunt"} - hrefs
    check(not missing, "/ready's <nav> lacks links to %s" % ", ".join(sorted(missing)))
    b.snap("ready")

    # -- Tags in view: the simulated three, live.
    b.open("/tags")
    b.driver.execute_script("window.__notReloaded = true")

    def ids():  # read in one script: the rows are re-rendered live under us
        return b.driver.execute_script(
            "return Array.from(document.querySelectorAll('table#tags tr.tag')).map(r => r.getAttribute('data-id'))")
    b.wait("the 3 simulated tags on /tags (%s)" % ", ".join(harness.TAGS), lambda: set(harness.TAGS) <= set(ids()), timeout=30)
    missing = b.driver.execute_script(
        "return ['.name', '.id', '.level', '.distance', 'form[action=\"/tags/name\"]', 'form[action=\"/tags/calibrate\"]']"
        ".filter(c => document.querySelectorAll('table#tags tr.tag ' + c).length < 3)")
    check(not missing, "/tags rows lack %s (each row wants its cells .name .id .level .distance and its two forms)" % ", ".join(missing))
    rows = "return (document.querySelector('table#tags tbody') || {}).innerHTML"
    before = b.driver.execute_script(rows)
    b.wait("a live update of /tags' rows (event: tags) without a reload",
           lambda: b.driver.execute_script(rows) != before, timeout=15)
    check(b.driver.execute_script("return window.__notReloaded === true"), "/tags changed by reloading, not live")
    b.wait("the 3 tags still there after a live update", lambda: set(harness.TAGS) <= set(ids()), timeout=10)
    check(b.finds("button#nearest") and b.finds("#nearest-result"), "/tags has no button#nearest and #nearest-result")
    b.click("button#nearest")
    b.wait("an answer in #nearest-result after 'hold a tag against the Pi'",
           lambda: b.path() == "/tags" and b.driver.execute_script(
               "return ((document.getElementById('nearest-result') || {}).textContent || '').trim()"), timeout=10)
    print("hold a tag against the Pi: %s" % b.find("#nearest-result").text.strip())
    print("tags in view: %s" % ", ".join(ids()))
    b.snap("tags")

    # -- Trail: three steps, a different tag and a clue each.
    b.open("/trail")
    check(b.finds("form#trail"), "/trail has no form#trail")
    for _ in range(6):
        if steps_on_page(b) >= 3:
            break
        n = steps_on_page(b)
        b.submit_action("add")
        b.wait("step %d after 'add'" % (n + 1), lambda: b.path() == "/trail" and steps_on_page(b) == n + 1)
    while steps_on_page(b) > 3:
        b.submit_action("remove-%d" % (steps_on_page(b) - 1))
        time.sleep(0.3)
    check(steps_on_page(b) == 3, "/trail has %d steps after adding, not 3" % steps_on_page(b))
    for n in range(3):
        select = Select(b.find('select[name="step-%d-region"]' % n))
        values = [o.get_attribute("value") for o in select.options]
        check(set(harness.TAGS) <= set(values), "step %d's tag choices %s lack the tags in view" % (n, values))
        select.select_by_value(harness.TAGS[n])
        clue = b.find('textarea[name="step-%d-clue"]' % n)
        clue.clear()
        clue.send_keys(CLUES[n])
        for field in ("hint", "found", "reward"):
            check(b.finds('[name="step-%d-%s"]' % (n, field)), "step %d has no step-%d-%s field" % (n, n, field))
    Select(b.find('select[name="order"]')).select_by_value("in_order")
    Select(b.find('select[name="mode"]')).select_by_value("solo")
    check(b.finds('input[name="hunters"]'), "/trail has no input name=hunters")
    b.snap("trail")
    # "Say it on the speaker": posts the draft too (the rehearsal takes it as last posted).
    said_from = clock()
    b.submit_action("say-0")
    b.wait("/trail again after say-0", lambda: b.path() == "/trail" and steps_on_page(b) == 3)
    kept = [Select(b.find('select[name="step-%d-region"]' % n)).first_selected_option.get_attribute("value") for n in range(3)]
    check(kept == harness.TAGS, "the trail's tags after a post are %s, not %s" % (kept, harness.TAGS))
    check(b.find('textarea[name="step-1-clue"]').get_attribute("value") == CLUES[1], "step 1's clue was not kept after a post")
    # Said on the speaker: the log says so; a --json `say` line for it is noted when missing
    # (README: `say` is "a line said"), not a failure.
    deadline = clock() + 20
    while clock() < deadline and CLUES[0] not in hunter.stderr_text():
        time.sleep(0.2)
    check(CLUES[0] in hunter.stderr_text(), "say-0 on /trail: the hunter's log does not say it said the first clue within 20 s")
    if not any(CLUES[0].lower() in (e.get("text") or "").lower() for _, e in hunter.events(said_from, "say")):
        print("  note: say-0 said the clue on the speaker (the log says so) but --json has no `say` line for it")

    # -- Rehearse to a WAV, then download it.
    b.open("/rehearse")
    check(b.finds("#rehearsal"), "/rehearse has no #rehearsal")
    b.snap("rehearse")
    rehearse_from = clock()
    b.submit_action("wav")

    def state():
        if b.path() != "/rehearse":
            b.open("/rehearse")
        text = b.find("#rehearsal").text.strip()
        if not text.startswith("ready") and not b.finds("#download"):
            time.sleep(0.5)
            b.open("/rehearse")  # a page without JS: the parent reloads
            text = b.find("#rehearsal").text.strip()
        check(not text.startswith(("failed", "error")), "the rehearsal failed: %s" % text)
        return text.startswith("ready") and b.finds("a#download")
    b.wait("the rehearsal ready with a#download", state, timeout=120)
    print("rehearsal ready %.1f s after the press: %s" % (clock() - rehearse_from, b.find("#rehearsal").text.strip()))
    b.snap("rehearse-ready")
    href = urllib.parse.urlparse(b.find("a#download").get_attribute("href")).path
    phone = harness.Phone(hunter.port)
    phone.session = b.session_cookie()["value"]
    r = phone.get(href)
    check(r.status == 200, "GET %s: %r" % (href, r))
    with open(os.path.join(artifacts, "rehearsal.wav"), "wb") as f:
        f.write(r.body)
    seconds, peak, rms = harness.wav_stats(r.body)
    check(seconds > 5 and peak > 1000 and rms > 30, "the rehearsal WAV has no sound (%.1f s, peak %d, rms %.0f)" % (seconds, peak, rms))
    print("rehearsal.wav: %.1f s, peak %d, rms %.0f (%s)" % (seconds, peak, rms, os.path.join(artifacts, "rehearsal.wav")))

    # -- Save: the file holds the trail, the hunt reloads and says the first clue.
    b.open("/trail")
    check(steps_on_page(b) == 3, "/trail shows %d steps after the rehearsal, not 3" % steps_on_page(b))
    inode = os.stat(hunter.config).st_ino
    saved_from = clock()
    b.submit_action("save")
    b.wait("#result after save", lambda: b.path() == "/trail" and b.finds("#result"))
    result = b.find("#result")
    problems = [li.text for li in b.finds("#result li.problem")]
    check("ok" in (result.get_attribute("class") or "").split(),
          "save: #result is %r, not ok: %s" % (result.get_attribute("class"), "; ".join(problems) or result.text))
    b.snap("trail-saved")
    # Atomically: a new file renamed over the old (a new inode), no temporary left beside it.
    check(os.stat(hunter.config).st_ino != inode, "the save rewrote %s in place (same inode), not a new file renamed over it" % hunter.config)
    beside = sorted(os.listdir(os.path.dirname(hunter.config)))
    check(beside == [os.path.basename(hunter.config)], "after the save the configuration's directory holds %s" % beside)
    with open(hunter.config) as f:
        saved = json.load(f)
    trail = (saved.get("hunt") or {}).get("trail") or []
    regions = [step.get("region") for step in trail]
    check(regions == harness.TAGS, "the saved configuration's hunt.trail regions are %s, not %s" % (regions, harness.TAGS))
    check([step.get("clue") for step in trail] == CLUES, "the saved configuration's clues are not the ones typed")
    wait_for_say(hunter, saved_from, CLUES[0], "after the save", event_name="clue")

    # -- Hunt.
    b.open("/hunt")
    for css in ("#said", "#detector", "ol#standings"):
        check(b.finds(css), "/hunt has no %s" % css)
    for action in ("start", "stop", "restart"):
        check(b.finds('button[name="action"][value="%s"]' % action), "/hunt has no button action=%s" % action)
    check(b.finds('form[action="/volume"] input[name="volume_db"]'), "/hunt has no form POST /volume with volume_db")
    b.snap("hunt")


def wait_for_say(hunter, since, clue, when, event_name, timeout=45):
    deadline = clock() + timeout
    while clock() < deadline:
        for _, e in hunter.events(since, "say"):
            if (event_name is None or e.get("event_name") == event_name) and clue.lower() in (e.get("text") or "").lower():
                print("said %s %s: %s" % (when, e.get("event_name"), e.get("text")))
                return e
        check(hunter.alive(), "the hunter exited (%s) %s: %s" % (hunter.process.returncode, when, hunter.stderr_tail()))
        time.sleep(0.2)
    said = ["%s: %s" % (e.get("event_name"), e.get("text")) for _, e in hunter.events(since, "say")][-4:]
    raise Failure("the hunt's --json did not say the first clue (%s%r) within %d s %s; said: %s" % (
        "event_name %s, " % event_name if event_name else "", clue, timeout, when, " | ".join(said) or "nothing"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=harness.default_binary())
    ap.add_argument("--artifacts", default=os.path.join(harness.REPO, ".build", "web-artifacts"))
    ap.add_argument("--keep", action="store_true", help="keep the run's temporary directory (config, stderr)")
    a = ap.parse_args()
    harness.require_binary("browser-test", a.binary)
    harness.main_guard("browser-test", lambda: run(a))


if __name__ == "__main__":
    main()
