"""Test support: real parts started by the tests (an upstream site on 127.0.0.1, redis-server, Chromium)."""
