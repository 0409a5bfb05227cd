"""Prints the text on the X11 CLIPBOARD as another application would paste it (nothing when no
application holds the clipboard). For the end-to-end test of copying a token."""

import select
import sys
import time

from Xlib import X, display


def main():
    d = display.Display()
    clipboard = d.intern_atom("CLIPBOARD")
    if d.get_selection_owner(clipboard) == X.NONE:
        return
    w = d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
    into = d.intern_atom("SLUICE_TEST_PASTE")
    w.convert_selection(clipboard, d.intern_atom("UTF8_STRING"), into, X.CurrentTime)
    d.flush()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not d.pending_events():
            select.select([d.fileno()], [], [], 0.1)
            continue
        event = d.next_event()
        if event.type == X.SelectionNotify:
            if event.property != X.NONE:
                data = w.get_full_property(into, X.AnyPropertyType)
                if data is not None:
                    value = data.value
                    sys.stdout.write(value.decode() if isinstance(value, bytes) else str(value))
            return
    sys.exit("no answer from the clipboard's owner")


main()
