"""Asks the top-level X11 window titled argv[1] to close, exactly as a window manager does when
the user clicks its close button (a WM_DELETE_WINDOW client message). For the app benchmark,
which runs under Xvfb with no window manager."""

import sys

from Xlib import X, display, protocol


def windows(window):
    for child in window.query_tree().children:
        yield child
        yield from windows(child)


def main():
    title = sys.argv[1]
    d = display.Display()
    for w in windows(d.screen().root):
        try:
            name = w.get_wm_name()
        except Exception:
            continue
        if name == title:
            message = protocol.event.ClientMessage(
                window=w,
                client_type=d.intern_atom("WM_PROTOCOLS"),
                data=(32, [d.intern_atom("WM_DELETE_WINDOW"), X.CurrentTime, 0, 0, 0]),
            )
            w.send_event(message, event_mask=X.NoEventMask)
            d.flush()
            return
    sys.exit(f"no window titled {title!r}")


main()
