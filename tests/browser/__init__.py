"""What the browser tests share (not a test module): see :mod:`browser.harness`."""
