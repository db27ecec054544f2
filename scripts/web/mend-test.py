#!/usr/bin/env python3
"""The page while `hunt --wait-for-fix` waits for a mended file (issue 26, docs/web.md):
a trail whose step 2 names a recording that is not there; the page is up during the wait,
Ready? lists the validator's line, the trail is mended on the page (a text clue instead),
saved, and the hunt starts with the same code and session, its first clue said.
Usage: scripts/web/mend-test.py [--binary B] [--keep]"""
import argparse
import json
import os
import time

import harness
from harness import check, clock

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--binary", default=harness.default_binary())
parser.add_argument("--keep", action="store_true")
options = parser.parse_args()


def body():
    with harness.Workdir("ph-mend-", keep=options.keep) as work:
        os.makedirs(os.path.join(work, "config"), mode=0o700)
        config = os.path.join(work, "config", "hunter.json")
        broken = {"regions": [{"name": "treasure", "uuid": harness.UUID}], "audio": {"device": "null"},
                  "hunt": {"trail": [{"region": harness.TAGS[1], "clue": "By the big tree."},
                                     {"region": harness.TAGS[2], "clue_wav": "missing.wav"}]}}
        with open(config, "w") as f:
            json.dump(broken, f)
        hunter = harness.Hunter(options.binary, work, extra=["--wait-for-fix", "--device", "null"], out=False)
        try:
            code = hunter.wait_code(timeout=60)
            phone = harness.Phone(hunter.port)
            phone.sign_in(code)
            ready = phone.get("/ready").text
            check("hunt.trail[1].clue_wav" in ready and "missing.wav" in ready,
                  "Ready? during the wait does not name the mistake (hunt.trail[1].clue_wav)")
            check(not any(e.get("event_name") == "startup" for _, e in hunter.events()), "the hunt started before the file was mended")
            saved = phone.post("/trail", {"step-0-region": harness.TAGS[1], "step-0-clue": "By the big tree.",
                                          "step-1-region": harness.TAGS[2], "step-1-clue": "Now look in the shed.",
                                          "order": "in_order", "mode": "solo", "hunters": "", "action": "save"})
            check(saved.status == 303, "the mended trail's save: %r, not 303" % saved)
            deadline = clock() + 40
            while clock() < deadline and not any(e.get("event_name") == "clue" for _, e in hunter.events()):
                time.sleep(0.2)
            clues = [e for _, e in hunter.events() if e.get("event_name") == "clue"]
            check(clues and "By the big tree." in clues[0].get("text", ""), "no first clue after the mend: %s" % hunter.stderr_tail())
            # The same code and session go on on the hunt's page.
            check(hunter.wait_code(timeout=10) == code, "the hunt's page has a new code after the mend")
            page = phone.get("/hunt")
            check(page.status == 200, "GET /hunt with the session from the wait: %r" % page)
            with open(config) as f:
                check("clue_wav" not in f.read(), "the file still names the missing recording")
            print("  mended on the page during the wait: the first clue %.1f s after the save, the same code and session" % (
                clock() - deadline + 40))
        finally:
            hunter.stop()


harness.main_guard("mend-test", body)
