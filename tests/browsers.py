"""Chromium and Firefox behind one small interface, for the browser tests that run in both.

Chromium is driven by Selenium and the system's ``chromedriver`` (the driver object that
``browser.harness.make_driver`` makes); Firefox ESR (Debian's ``firefox-esr``) by Mozilla's own
Marionette client, ``marionette-driver`` (pinned in requirements.txt), which talks to the
browser's built-in Marionette server: no geckodriver, which no Debian package, PyPI or npm
package carries as Mozilla builds it (the npm and PyPI installers download it from GitHub).

:class:`Engine` gives both the same calls: open a page, run a script (synchronous or with a
callback), set the width of the page's layout, read an element's computed accessible role and
name (the accessibility tree's, as a screen reader gets it), press keys and rest the pointer.

Width: Chromium emulates any viewport width (the DevTools protocol). A Firefox window is at
least 500 pixels wide, so a narrower layout is made as a reader makes it, by zooming: a
540-pixel window at 150 % lays the page out 360 CSS pixels wide (``ZOOMED``), as a phone does.

Offline: Chromium resolves no host but 127.0.0.1; Firefox sends every request for another
host to a closed local port (a proxy nobody answers), so any such request fails.
"""

from __future__ import annotations

import os
import shutil
import tempfile

#: The W3C WebDriver codes of the keys the tests press.
KEYS = {"Tab": "\ue004", "Enter": "\ue007", "Shift": "\ue008", "Escape": "\ue00c", "ArrowLeft": "\ue012",
        "ArrowRight": "\ue014", "ArrowUp": "\ue013", "ArrowDown": "\ue015", "End": "\ue010"}
#: Firefox: layout width (CSS pixels) -> (window width, zoom). Zoom steps are 60/n device
#: pixels per CSS pixel (Firefox's app units), so each pair gives the width exactly.
ZOOMED = {360: (540, 1.5), 414: (552, 60 / 45)}
HEIGHT = 900
FIREFOX_NAMES = ("firefox-esr", "firefox")


def find_firefox() -> str | None:
    if os.environ.get("POSENC_FIREFOX"):
        return os.environ["POSENC_FIREFOX"]
    for name in FIREFOX_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Engine:
    """What a test needs of a browser; ``name`` is "chromium" or "firefox"."""

    name = ""
    driver = None

    def script(self, js: str, *args):
        raise NotImplementedError

    def script_async(self, js: str, *args):
        raise NotImplementedError

    def open(self, url: str) -> None:
        """Open ``url`` and wait until that document (not the one before it) has loaded."""
        self.script("window.__posencOld = true;")
        self._navigate(url)
        self.wait("return !window.__posencOld && document.readyState === 'complete';")

    def wait(self, js: str, *args, timeout: float = 60, poll: float = 0.2):
        """Run ``js`` until it returns something truthy; returns that (TimeoutError after ``timeout`` s)."""
        import time

        end = time.monotonic() + timeout
        while True:
            value = self.script(js, *args)
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f"{self.name}: waited {timeout} s for {js[:80]!r}")
            time.sleep(poll)

    def width(self, width: int) -> None:
        """Lay the open page out ``width`` CSS pixels wide (it stays so for later pages)."""
        raise NotImplementedError

    def accessible(self, element) -> tuple[str, str]:
        """(computed role, computed name) of an element, from the browser's accessibility tree."""
        raise NotImplementedError

    def accessible_all(self, selector: str, role: str) -> list[tuple[str, str]]:
        """:meth:`accessible` of every element ``selector`` matches, in document order, for
        elements expected to have the role ``role`` (Chromium reads only the tree's nodes of
        that role at once: one WebDriver call per element took half a minute for chapter 4's
        700 formulas); ("", "") for an element that has another role or none."""
        return [self.accessible(e) for e in self.script("return Array.from(document.querySelectorAll(arguments[0]));",
                                                         selector)]

    def keys(self, *names: str) -> None:
        """Press and release each key of ``names`` (see :data:`KEYS`; "Shift+Tab" holds Shift)."""
        raise NotImplementedError

    def hover(self, element) -> None:
        """Rest the pointer on the middle of ``element``."""
        raise NotImplementedError

    def settle(self) -> None:
        """Wait two frames: what the page changed is laid out."""
        self.script_async("const done = arguments[arguments.length - 1];"
                          " requestAnimationFrame(() => requestAnimationFrame(() => done(true)));")

    def quit(self) -> None:
        raise NotImplementedError

    def _navigate(self, url: str) -> None:
        raise NotImplementedError


class Chromium(Engine):
    """A Selenium driver of headless Chromium (``browser.harness.make_driver``)."""

    name = "chromium"

    def __init__(self, driver):
        self.driver = driver

    def script(self, js, *args):
        return self.driver.execute_script(js, *args)

    def script_async(self, js, *args):
        return self.driver.execute_async_script(js, *args)

    def _navigate(self, url):
        self.driver.get(url)

    def width(self, width):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
        self.settle()

    def accessible(self, element):
        return element.aria_role or "", element.accessible_name or ""

    #: The DevTools protocol's names of the roles asked for (its internal ones).
    CDP_ROLES = {"math": "MathMLMath"}

    def accessible_all(self, selector, role):
        cdp = self.driver.execute_cdp_cmd
        root = cdp("DOM.getDocument", {"depth": 0})["root"]
        wanted = cdp("DOM.querySelectorAll", {"nodeId": root["nodeId"], "selector": selector})["nodeIds"]
        tree = [n for n in cdp("Accessibility.queryAXTree", {"backendNodeId": root["backendNodeId"],
                                                             "role": self.CDP_ROLES.get(role, role)})["nodes"]
                if "backendDOMNodeId" in n]
        found = cdp("DOM.pushNodesByBackendIdsToFrontend",
                    {"backendNodeIds": [n["backendDOMNodeId"] for n in tree]})["nodeIds"] if tree else []
        by_node = dict(zip(found, tree))
        return [(role, by_node[i].get("name", {}).get("value", "")) if i in by_node else ("", "") for i in wanted]

    def _actions(self):
        from selenium.webdriver.common.action_chains import ActionChains

        return ActionChains(self.driver)

    def keys(self, *names):
        for name in names:
            chain = self._actions()
            if name.startswith("Shift+"):
                chain.key_down(KEYS["Shift"]).send_keys(KEYS[name[6:]]).key_up(KEYS["Shift"])
            else:
                chain.send_keys(KEYS[name])
            chain.perform()

    def hover(self, element):
        self._actions().move_to_element(element).perform()

    def quit(self):
        self.driver.quit()


class Firefox(Engine):
    """Headless Firefox ESR through Marionette, with a fresh profile (removed on :meth:`quit`)."""

    name = "firefox"

    def __init__(self, binary: str, timeout: float = 60):
        from marionette_driver.marionette import Marionette

        self._logs = tempfile.TemporaryDirectory(prefix="posenc-firefox-")
        prefs = {
            # Offline: every request to another host goes to a closed local port.
            "network.proxy.type": 1,
            "network.proxy.http": "127.0.0.1", "network.proxy.http_port": 9,
            "network.proxy.ssl": "127.0.0.1", "network.proxy.ssl_port": 9,
            "network.proxy.no_proxies_on": "127.0.0.1",
            "network.proxy.allow_hijacking_localhost": False,
            # The zoom belongs to the tab, not to the site (it must not follow a host's pages).
            "browser.zoom.siteSpecific": False,
            "ui.prefersReducedMotion": 1,
            "general.smoothScroll": False,  # a key scrolls at once, as in the Chromium the tests drive
        }
        self.driver = Marionette(host="127.0.0.1", port=0, bin=binary, headless=True, prefs=prefs,
                                 gecko_log=os.path.join(self._logs.name, "gecko.log"), startup_timeout=timeout)
        self.driver.start_session()
        self.driver.timeout.page_load = timeout
        self.driver.timeout.script = timeout
        self._zoom = 1.0
        self.driver.set_window_rect(width=1280, height=HEIGHT)

    def script(self, js, *args):
        return self.driver.execute_script(js, script_args=args, sandbox=None, new_sandbox=False)

    def script_async(self, js, *args):
        return self.driver.execute_async_script(js, script_args=args, sandbox=None, new_sandbox=False)

    def _navigate(self, url):
        self.driver.navigate(url)

    def width(self, width):
        window, zoom = ZOOMED.get(width, (width, 1.0))
        self.driver.set_window_rect(width=window, height=HEIGHT)
        with self.driver.using_context(self.driver.CONTEXT_CHROME):
            self.driver.execute_script("gBrowser.selectedBrowser.fullZoom = arguments[0];", script_args=[zoom])
        self._zoom = zoom
        self.settle()
        got = self.script("return document.documentElement.clientWidth + (innerWidth - document.documentElement.clientWidth);")
        if abs(got - width) > 1:
            raise RuntimeError(f"firefox: asked for a {width}-pixel layout, got {got}")

    def accessible(self, element):
        return element.computed_role or "", element.computed_label or ""

    def keys(self, *names):
        for name in names:
            seq = self.driver.actions.sequence("key", "keyboard")
            if name.startswith("Shift+"):
                seq.key_down(KEYS["Shift"]).key_down(KEYS[name[6:]]).key_up(KEYS[name[6:]]).key_up(KEYS["Shift"])
            else:
                seq.key_down(KEYS[name]).key_up(KEYS[name])
            seq.perform()
        self.driver.actions.release()

    def hover(self, element):
        self.driver.actions.sequence("pointer", "mouse", {"pointerType": "mouse"}).pointer_move(
            0, 0, origin=element).perform()

    def quit(self):
        import gc

        from mozprofile.profile import BaseProfile

        try:
            self.driver.delete_session()
        finally:
            self.driver.cleanup()  # stops Firefox and removes its profile
            # ... once: not again when Python exits (mozprofile's __del__ would, and fail).
            for profile in [o for o in gc.get_objects() if isinstance(o, BaseProfile)]:
                profile.cleanup()
                profile.restore = False
            self._logs.cleanup()
