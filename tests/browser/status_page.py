#!/usr/bin/env python3
"""The status page in a real browser: Debian's chromium, headless, driven
by python3-selenium through chromium-driver. Run by the cluster test
`status_page/in_a_real_browser_it_shows_the_cluster` against a running
cluster, with the counts that cluster has; exits 0 only if the page shows
them, searches its actors, follows a job's output, draws its charts and
its timeline.
Keeps a screenshot of each page in --screenshots."""

import argparse
import os
import re
import sys
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

TIMEOUT = 30


def browser(profile):
    opts = Options()
    opts.binary_location = "/usr/bin/chromium"
    # As root chromium needs --no-sandbox; the rest keep it off the
    # network this machine does not have.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-quic", "--no-first-run",
                 "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000",
                 "--user-data-dir=" + profile):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"),
                            options=opts)


def text_of(driver, css):
    try:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        return found[0].text if found else None
    except StaleElementReferenceException:
        return None  # redrawn meanwhile: asked again


def wait_for(driver, what, condition, timeout=TIMEOUT):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.2).until(
            lambda d: condition(d))
    except Exception:
        raise AssertionError("timed out waiting for " + what)


def wait_text(driver, css, want, timeout=TIMEOUT):
    wait_for(driver, "%s to read %r (it reads %r)" %
             (css, want, text_of(driver, css)),
             lambda d: text_of(d, css) == str(want), timeout)


def shot(driver, directory, name):
    path = os.path.join(directory, name + ".png")
    driver.save_screenshot(path)
    print("screenshot", path)


def rows(driver, css):
    return driver.find_elements(By.CSS_SELECTOR, css + " tbody tr")


def check(args, driver):
    # Overview: the counts the cluster has.
    driver.get(args.url + "/#/overview")
    wait_text(driver, "#nodes-alive", args.nodes)
    wait_text(driver, "#actors-alive", args.actors_alive)
    wait_text(driver, "#jobs-total", args.jobs)
    wait_for(driver, "a row per node",
             lambda d: len(rows(d, "#nodes-table")) == args.nodes)
    print("overview shows", args.nodes, "nodes,", args.actors_alive,
          "actors alive,", args.jobs, "jobs")
    shot(driver, args.screenshots, "overview")

    # Actors: search, and page on.
    driver.get(args.url + "/#/actors")
    wait_for(driver, "the actor table",
             lambda d: len(rows(d, "#actors-table")) > 0)
    search = driver.find_element(By.ID, "actor-search")
    search.send_keys(args.search)
    wait_text(driver, "#actors-matched", args.search_matches)
    want = args.search.lower()

    def all_match(d):
        try:
            names = [r.find_elements(By.TAG_NAME, "td")[1].text.lower()
                     for r in rows(d, "#actors-table")]
        except StaleElementReferenceException:
            return False
        return len(names) == min(100, args.search_matches) and all(
            want in n for n in names)
    wait_for(driver, "only matching actors in the table", all_match)
    print("search", repr(args.search), "finds", args.search_matches)
    shot(driver, args.screenshots, "actors")
    if args.search_matches > 100:
        driver.find_element(By.ID, "actors-next").click()
        wait_for(driver, "the second page",
                 lambda d: len(rows(d, "#actors-table")) ==
                 min(100, args.search_matches - 100))
        print("the second page holds the rest")

    # Jobs, and one job's output, followed as it grows.
    driver.get(args.url + "/#/jobs")
    wait_for(driver, "the job's row", lambda d: any(
        r.text.startswith(str(args.job)) for r in rows(d, "#jobs-table")))
    shot(driver, args.screenshots, "jobs")
    driver.get(args.url + "/#/jobs/" + str(args.job))
    wait_for(driver, "the job's tasks by state",
             lambda d: "FINISHED" in (text_of(d, "#job-tasks") or ""))
    pattern = re.compile(re.escape(args.follow) + r" (\d+)")

    def newest(d):
        text = text_of(d, "#job-logs") or ""
        found = [int(n) for n in pattern.findall(text)]
        return max(found) if found else 0
    wait_for(driver, "the job's output", lambda d: newest(d) > 0)
    first = newest(driver)
    # No reload: the page reads on by itself.
    wait_for(driver, "later output", lambda d: newest(d) >= first + 5)
    print("followed the job's output from line", first, "to", newest(driver))
    shot(driver, args.screenshots, "job")

    # Supervision trees: the nested child, running.
    driver.get(args.url + "/#/trees")

    def child_running(d):
        for r in rows(d, ".tree-table"):
            cells = [c.text for c in r.find_elements(By.TAG_NAME, "td")]
            if cells and cells[0].strip() == args.tree_child:
                return cells[2] == "RUNNING"
        return False
    wait_for(driver, "the tree's child " + args.tree_child, child_running)
    shot(driver, args.screenshots, "trees")

    # Charts of the last hour.
    driver.get(args.url + "/#/charts")
    wait_for(driver, "four charts", lambda d: len(
        d.find_elements(By.CSS_SELECTOR, "#charts .chart")) == 4)
    shot(driver, args.screenshots, "charts")

    # The timeline: the attempts of the last minute on their workers' rows,
    # and the object read from another node.
    driver.get(args.url + "/#/timeline")
    wait_for(driver, "slices on the timeline", lambda d: len(
        d.find_elements(By.CSS_SELECTOR, "#timeline-chart rect.slice")) > 0)
    wait_for(driver, "an object transfer on the timeline", lambda d: len(
        d.find_elements(By.CSS_SELECTOR, "#timeline-chart rect.transfer")) > 0)
    print("timeline:", text_of(driver, "#timeline-summary"))
    shot(driver, args.screenshots, "timeline")

    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    if errors:
        raise AssertionError("the page logged errors: %s" % errors)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", required=True)
    p.add_argument("--nodes", type=int, required=True)
    p.add_argument("--actors-alive", type=int, required=True)
    p.add_argument("--jobs", type=int, required=True)
    p.add_argument("--search", required=True)
    p.add_argument("--search-matches", type=int, required=True)
    p.add_argument("--job", required=True)
    p.add_argument("--follow", required=True,
                   help="a line the job prints, followed by a count")
    p.add_argument("--tree-child", required=True,
                   help="a child of a supervision tree that runs")
    p.add_argument("--screenshots", required=True)
    args = p.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        driver = browser(profile)
        try:
            check(args, driver)
        except AssertionError as e:
            shot(driver, args.screenshots, "failed")
            print("FAILED:", e)
            return 1
        finally:
            driver.quit()
    print("the status page passed in", "chromium")
    return 0


if __name__ == "__main__":
    sys.exit(main())
