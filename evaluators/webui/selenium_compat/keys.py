"""``selenium.webdriver.common.keys``: the WebDriver key code points, and their Playwright names."""
from __future__ import annotations


class Keys:
    NULL = "\ue000"
    CANCEL = "\ue001"
    HELP = "\ue002"
    BACKSPACE = "\ue003"
    BACK_SPACE = BACKSPACE
    TAB = "\ue004"
    CLEAR = "\ue005"
    RETURN = "\ue006"
    ENTER = "\ue007"
    SHIFT = "\ue008"
    LEFT_SHIFT = SHIFT
    CONTROL = "\ue009"
    LEFT_CONTROL = CONTROL
    ALT = "\ue00a"
    LEFT_ALT = ALT
    PAUSE = "\ue00b"
    ESCAPE = "\ue00c"
    SPACE = "\ue00d"
    PAGE_UP = "\ue00e"
    PAGE_DOWN = "\ue00f"
    END = "\ue010"
    HOME = "\ue011"
    LEFT = "\ue012"
    ARROW_LEFT = LEFT
    UP = "\ue013"
    ARROW_UP = UP
    RIGHT = "\ue014"
    ARROW_RIGHT = RIGHT
    DOWN = "\ue015"
    ARROW_DOWN = DOWN
    INSERT = "\ue016"
    DELETE = "\ue017"
    SEMICOLON = "\ue018"
    EQUALS = "\ue019"
    NUMPAD0 = "\ue01a"
    NUMPAD1 = "\ue01b"
    NUMPAD2 = "\ue01c"
    NUMPAD3 = "\ue01d"
    NUMPAD4 = "\ue01e"
    NUMPAD5 = "\ue01f"
    NUMPAD6 = "\ue020"
    NUMPAD7 = "\ue021"
    NUMPAD8 = "\ue022"
    NUMPAD9 = "\ue023"
    MULTIPLY = "\ue024"
    ADD = "\ue025"
    SEPARATOR = "\ue026"
    SUBTRACT = "\ue027"
    DECIMAL = "\ue028"
    DIVIDE = "\ue029"
    F1 = "\ue031"
    F2 = "\ue032"
    F3 = "\ue033"
    F4 = "\ue034"
    F5 = "\ue035"
    F6 = "\ue036"
    F7 = "\ue037"
    F8 = "\ue038"
    F9 = "\ue039"
    F10 = "\ue03a"
    F11 = "\ue03b"
    F12 = "\ue03c"
    META = "\ue03d"
    COMMAND = META


#: WebDriver key code point → the key name Playwright's keyboard understands. CANCEL, HELP and
#: CLEAR have no Playwright key and raise UnsupportedSeleniumCall when sent.
PLAYWRIGHT_KEYS: dict[str, str] = {
    Keys.BACKSPACE: "Backspace", Keys.TAB: "Tab", Keys.RETURN: "Enter", Keys.ENTER: "Enter", Keys.SHIFT: "Shift",
    Keys.CONTROL: "Control", Keys.ALT: "Alt", Keys.PAUSE: "Pause", Keys.ESCAPE: "Escape",
    Keys.SPACE: " ", Keys.PAGE_UP: "PageUp", Keys.PAGE_DOWN: "PageDown", Keys.END: "End",
    Keys.HOME: "Home", Keys.LEFT: "ArrowLeft", Keys.UP: "ArrowUp", Keys.RIGHT: "ArrowRight",
    Keys.DOWN: "ArrowDown", Keys.INSERT: "Insert", Keys.DELETE: "Delete", Keys.SEMICOLON: ";",
    Keys.EQUALS: "=", Keys.MULTIPLY: "NumpadMultiply", Keys.ADD: "NumpadAdd",
    Keys.SEPARATOR: "NumpadDecimal", Keys.SUBTRACT: "NumpadSubtract", Keys.DECIMAL: "NumpadDecimal",
    Keys.DIVIDE: "NumpadDivide", Keys.META: "Meta",
    **{chr(0xE01A + n): f"Numpad{n}" for n in range(10)},
    **{chr(0xE031 + n): f"F{n + 1}" for n in range(12)},
}

MODIFIERS = frozenset({"Shift", "Control", "Alt", "Meta"})


def is_key(char: str) -> bool:
    """Whether a character is a WebDriver special key (the private-use block U+E000–U+F8FF)."""
    return "\ue000" <= char <= "\uf8ff"
