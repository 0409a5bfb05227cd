"""Answers the native (GTK) dialog titled argv[1] as a user would with the keyboard. Sluice's
dialogs put the safe answer first, focused and default:
- `return` gives the dialog the focus and presses Return (the default: "no");
- `accept` presses Tab first, moving to the button that allows, then Return;
- `close` closes it like a window manager's close button (WM_DELETE_WINDOW): "no" too;
- `present` touches nothing: exits 0 while the dialog is up.
Exits 3 when no such window is up yet (the dialog opens asynchronously; the caller retries).
Xvfb runs no window manager, so the focus is set here."""

import sys

from Xlib import X, XK, display, protocol
from Xlib.ext import xtest


def windows(window):
    for child in window.query_tree().children:
        yield child
        yield from windows(child)


def name(d, w):
    """The window's title: _NET_WM_NAME (UTF-8, as GTK sets it), else WM_NAME."""
    prop = w.get_full_property(d.intern_atom("_NET_WM_NAME"), 0)
    if prop is not None:
        value = prop.value
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return w.get_wm_name()


def find(d, title):
    for w in windows(d.screen().root):
        try:
            if name(d, w) == title and w.get_attributes().map_state == X.IsViewable:
                return w
        except Exception:
            continue
    return None


def main():
    title, answer = sys.argv[1], sys.argv[2]
    d = display.Display()
    w = find(d, title)
    if w is None:
        sys.exit(3)
    if answer == "present":
        return
    if answer == "close":
        message = protocol.event.ClientMessage(
            window=w,
            client_type=d.intern_atom("WM_PROTOCOLS"),
            data=(32, [d.intern_atom("WM_DELETE_WINDOW"), X.CurrentTime, 0, 0, 0]),
        )
        w.send_event(message, event_mask=X.NoEventMask)
    else:
        w.set_input_focus(X.RevertToParent, X.CurrentTime)
        d.sync()
        keys = ["Tab", "Return"] if answer == "accept" else ["Return"]
        for name in keys:
            key = d.keysym_to_keycode(XK.string_to_keysym(name))
            xtest.fake_input(d, X.KeyPress, key)
            xtest.fake_input(d, X.KeyRelease, key)
            d.sync()
    d.sync()


main()
