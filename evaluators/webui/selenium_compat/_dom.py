"""JavaScript run inside the page: element lookup, visibility, pointer points, form handling.

Everything is plain source text so that each Playwright call ships it with the call (one
``evaluate`` round trip, no state left in the page that a page script could find or tamper with).
``HELPERS`` defines a ``H`` object; ``element_call`` and ``page_call`` wrap it into the functions
Playwright evaluates. Errors meant for Python are thrown as ``MB:<code>:<message>``.

The rules follow chromedriver and Selenium's JavaScript atoms (``bot.dom.isShown``,
``bot.color.standardizeColor``, chromedriver's ``get_element_location.js``, the ``clear`` atom),
re-implemented here; where they are approximated the docstring of the Python caller says so.
"""
from __future__ import annotations

HELPERS = r"""
const H = (() => {
  const XHTML = 'http://www.w3.org/1999/xhtml';
  const styles = new Map();
  const style = (el) => {
    let s = styles.get(el);
    if (s === undefined) { s = getComputedStyle(el); styles.set(el, s); }
    return s;
  };
  const fail = (code, message) => { throw new Error('MB:' + code + ':' + message); };
  const parentElement = (node) => {
    const p = node.parentNode;
    if (!p) return null;
    if (p.nodeType === 1) return p;
    if (p.nodeType === 11 && p.host) return p.host;
    return null;
  };
  const tagOf = (el) => (el.localName || '').toLowerCase();
  const inputType = (el) => (tagOf(el) === 'input' ? String(el.type || 'text').toLowerCase() : '');

  function live(el) {
    if (!el || el.nodeType !== 1) fail('stale', 'not an element');
    if (!el.isConnected) fail('stale', 'stale element reference: element is not attached to the page document');
    return el;
  }

  function describe(el) {
    if (!el) return 'nothing';
    const html = el.outerHTML || ('<' + tagOf(el) + '>');
    const open = html.indexOf('>');
    return open > 0 ? html.slice(0, Math.min(open + 1, 200)) : html.slice(0, 200);
  }

  // --- visibility (bot.dom.isShown) ---------------------------------------------------------
  function displayNone(el) {
    for (let e = el; e; e = parentElement(e)) if (style(e).display === 'none') return true;
    return false;
  }
  function zeroOpacity(el) {
    for (let e = el; e; e = parentElement(e)) if (parseFloat(style(e).opacity) === 0) return true;
    return false;
  }
  function positiveSize(el) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) return true;
    if (el.localName === 'path' && (r.width > 0 || r.height > 0)) {
      return parseInt(style(el).strokeWidth, 10) > 0;
    }
    if (style(el).overflow === 'hidden') return false;
    for (const n of el.childNodes) {
      if (n.nodeType === 3) return true;
      if (n.nodeType === 1 && positiveSize(n)) return true;
    }
    return false;
  }
  function overflowState(el) {
    const doc = el.ownerDocument, html = doc.documentElement, body = doc.body;
    const htmlOverflow = style(html).overflow;
    const region = el.getBoundingClientRect();
    let fixed = false;
    const canBeOverflowed = (c, position) => {
      if (c === html) return true;
      const display = style(c).display;
      if (display.startsWith('inline') || display === 'contents') return false;
      return !(position === 'absolute' && style(c).position === 'static');
    };
    const overflowParent = (e) => {
      const position = style(e).position;
      if (position === 'fixed') { fixed = true; return e === html ? null : html; }
      let p = e.parentElement;
      while (p && !canBeOverflowed(p, position)) p = p.parentElement;
      return p;
    };
    const overflowOf = (e) => {
      let source = e;
      if (htmlOverflow === 'visible') {
        if (e === html && body) source = body;
        else if (e === body) return { x: 'visible', y: 'visible' };
      }
      const s = style(source);
      const o = { x: s.overflowX, y: s.overflowY };
      if (e === html) {
        if (o.x === 'visible') o.x = 'auto';
        if (o.y === 'visible') o.y = 'auto';
      }
      return o;
    };
    const scrollOf = (e) => (e === html ? { x: window.scrollX, y: window.scrollY }
                                        : { x: e.scrollLeft, y: e.scrollTop });
    for (let c = overflowParent(el); c; c = overflowParent(c)) {
      const o = overflowOf(c);
      if (o.x === 'visible' && o.y === 'visible') continue;
      const cr = c.getBoundingClientRect();
      if (cr.width === 0 || cr.height === 0) return 'hidden';
      const underX = region.right < cr.left, underY = region.bottom < cr.top;
      if ((underX && o.x === 'hidden') || (underY && o.y === 'hidden')) return 'hidden';
      if ((underX && o.x !== 'visible') || (underY && o.y !== 'visible')) {
        const sc = scrollOf(c);
        const stuckX = region.right < cr.left - sc.x, stuckY = region.bottom < cr.top - sc.y;
        if ((stuckX && o.x !== 'visible') || (stuckY && o.y !== 'visible')) return 'hidden';
        return overflowState(c) === 'hidden' ? 'hidden' : 'scroll';
      }
      const overX = region.left >= cr.left + cr.width, overY = region.top >= cr.top + cr.height;
      if ((overX && o.x === 'hidden') || (overY && o.y === 'hidden')) return 'hidden';
      if ((overX && o.x !== 'visible') || (overY && o.y !== 'visible')) {
        if (fixed) {
          const sc = scrollOf(c);
          if (region.left >= html.scrollWidth - sc.x || region.top >= html.scrollHeight - sc.y) return 'hidden';
        }
        return overflowState(c) === 'hidden' ? 'hidden' : 'scroll';
      }
    }
    return 'none';
  }
  function hiddenByOverflow(el) {
    if (overflowState(el) !== 'hidden') return false;
    for (const child of el.children) if (!hiddenByOverflow(child) && positiveSize(child)) return false;
    return true;
  }
  function isShown(el, ignoreOpacity) {
    if (el === el.ownerDocument.body) return true;
    const tag = tagOf(el);
    if (tag === 'option' || tag === 'optgroup') {
      const select = el.closest('select');
      return !!select && isShown(select, true);
    }
    if (inputType(el) === 'hidden' || tag === 'noscript') return false;
    const visibility = style(el).visibility;
    if (visibility === 'hidden' || visibility === 'collapse') return false;
    if (displayNone(el)) return false;
    if (!ignoreOpacity && zeroOpacity(el)) return false;
    if (!positiveSize(el)) return false;
    return !hiddenByOverflow(el);
  }

  function visibleText(el) {
    const raw = el.innerText !== undefined ? el.innerText : (el.textContent || '');
    return raw.replace(/\u00a0/g, ' ').trim();
  }

  // --- computed styles as Selenium's value_of_css_property reports them ---------------------
  const COLOR_PROPERTIES = new Set(['background-color', 'border-top-color', 'border-right-color',
    'border-bottom-color', 'border-left-color', 'color', 'outline-color']);
  const RGB = /^rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*([\d.]+)\s*)?\)$/;
  function standardizeColor(name, value) {
    if (!COLOR_PROPERTIES.has(name)) return value;
    const m = RGB.exec(value);
    if (!m) return value;
    const alpha = m[4] === undefined ? 1 : Number(m[4]);
    return 'rgba(' + m[1] + ', ' + m[2] + ', ' + m[3] + ', ' + alpha + ')';
  }
  function cssValue(el, name) {
    return standardizeColor(name, style(el).getPropertyValue(name));
  }

  // --- xpath that names one element, /html/body/div[2]/p[1] ---------------------------------
  const paths = new Map();
  function xpath(el) {
    const doc = el.ownerDocument;
    if (el === doc.documentElement) return '/html';
    if (el === doc.body) return '/html/body';
    const known = paths.get(el);
    if (known !== undefined) return known;
    const parent = el.parentElement;
    const name = el.localName;
    const isHtml = el.namespaceURI === XHTML;
    let index = 1;
    for (let s = el.previousElementSibling; s; s = s.previousElementSibling) {
      if (s.localName === name && (!isHtml || s.namespaceURI === XHTML)) index += 1;
    }
    const step = isHtml ? name + '[' + index + ']' : "*[local-name()='" + name + "'][" + index + ']';
    const path = (parent ? xpath(parent) : '') + '/' + step;
    paths.set(el, path);
    return path;
  }

  // --- locators (Selenium's conversions for id/name/class happen in Python) -----------------
  function find(root, using, value) {
    const scope = root ? live(root) : document;
    try {
      switch (using) {
        case 'css selector':
          return Array.from(scope.querySelectorAll(value));
        case 'tag name':
          return Array.from(scope.getElementsByTagName(value));
        case 'xpath': {
          const result = document.evaluate(value, scope, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
          const found = [];
          for (let i = 0; i < result.snapshotLength; i++) {
            const node = result.snapshotItem(i);
            if (node.nodeType !== 1) {
              fail('selector', 'The result of the xpath expression "' + value + '" is: ' + node +
                   '. It should be an element.');
            }
            found.push(node);
          }
          return found;
        }
        case 'link text':
        case 'partial link text': {
          const partial = using === 'partial link text';
          return Array.from(scope.querySelectorAll('a')).filter((a) => {
            const text = isShown(a, false) ? visibleText(a) : '';
            return partial ? text.includes(value) : text === value;
          });
        }
      }
    } catch (e) {
      if (String(e.message).startsWith('MB:')) throw e;
      fail('selector', 'invalid selector: ' + e.message);
    }
    fail('selector', 'invalid locator: ' + using);
  }

  // --- pointer points (chromedriver's get_element_location.js rules) ------------------------
  function firstRect(el) {
    const rects = el.getClientRects();
    if (!rects.length) return null;
    for (const r of rects) if (r.width > 0 && r.height > 0) return r;
    return rects[0];
  }
  function inViewPoint(el) {
    const r = firstRect(el);
    if (!r) return null;
    let left = Math.max(0, r.left), right = Math.min(window.innerWidth, r.right);
    let top = Math.max(0, r.top), bottom = Math.min(window.innerHeight, r.bottom);
    const clips = (v) => v === 'auto' || v === 'scroll' || v === 'hidden';
    for (let e = el; e.parentElement && e.parentElement !== document.body; e = e.parentElement) {
      const p = e.parentElement;
      if (!p.getClientRects().length) break;
      const s = style(p), pr = firstRect(p);
      if (!(pr.right > left && pr.bottom > top && right > pr.left && bottom > pr.top)) continue;
      const both = clips(s.overflow);
      if (both || clips(s.overflowX)) { left = Math.max(left, pr.left); right = Math.min(right, pr.right); }
      if (both || clips(s.overflowY)) { top = Math.max(top, pr.top); bottom = Math.min(bottom, pr.bottom); }
    }
    return { x: 0.5 * (left + right), y: 0.5 * (top + bottom) };
  }
  function inView(el) {
    const p = inViewPoint(el);
    if (!p || p.x <= 0 || p.y <= 0 || p.x >= window.innerWidth || p.y >= window.innerHeight) return false;
    return document.elementsFromPoint(p.x, p.y).includes(el);
  }
  function pointerPoint(el) {
    live(el);
    if (!inView(el)) el.scrollIntoView({ behavior: 'instant', block: 'end', inline: 'nearest' });
    if (!el.getClientRects().length) {
      fail('notinteractable', 'element not interactable: ' + describe(el) + ' has no size and location');
    }
    const p = inViewPoint(el);
    return { x: Math.trunc(p.x), y: Math.trunc(p.y) };
  }
  function clickPoint(el) {
    const p = pointerPoint(el);
    const hit = document.elementFromPoint(p.x, p.y);
    const blocked = !(hit && (hit === el || el.contains(hit)));
    return { x: p.x, y: p.y, target: describe(el), blocker: blocked ? describe(hit) : null };
  }

  // --- form controls ------------------------------------------------------------------------
  const fire = (el, type) => el.dispatchEvent(new Event(type, { bubbles: true }));
  function clickOption(option) {
    live(option);
    const select = option.closest('select');
    if (select && select.multiple) {
      option.selected = !option.selected;
    } else {
      if (option.selected) return;
      option.selected = true;
    }
    if (select) { fire(select, 'input'); fire(select, 'change'); }
  }
  const INPUT_CONTROL_TYPES = new Set(['text', 'search', 'url', 'tel', 'email', 'password', 'date', 'month',
    'week', 'time', 'datetime-local', 'number', 'range', 'color', 'file']);
  function clear(el) {
    live(el);
    const tag = tagOf(el);
    const editable = ((tag === 'input' && INPUT_CONTROL_TYPES.has(inputType(el))) || tag === 'textarea' ||
      el.isContentEditable) && !el.readOnly;
    if (!editable) fail('invalidstate', 'invalid element state: ' + describe(el) + ' is not user-editable');
    if (!isShown(el, true)) fail('notinteractable', 'element not interactable: ' + describe(el));
    if (el.disabled) fail('invalidstate', 'invalid element state: ' + describe(el) + ' is disabled');
    const doc = el.ownerDocument;
    if (el.isContentEditable && tag !== 'input' && tag !== 'textarea') {
      el.textContent = '';
      return;
    }
    if (el.value) {
      if (doc.activeElement !== el) { if (doc.activeElement) doc.activeElement.blur(); el.focus(); }
      el.value = '';
      fire(el, 'change');
      if (doc.activeElement && doc.activeElement !== doc.body) doc.activeElement.blur();
    }
  }
  function kind(el) {
    live(el);
    return { tag: tagOf(el), type: inputType(el) };
  }
  function focusForKeys(el, isText) {
    live(el);
    const doc = el.ownerDocument;
    let target = el;
    if (el.isContentEditable) {
      while (target.parentElement && target.parentElement.isContentEditable) target = target.parentElement;
    }
    const wasFocused = doc.activeElement === el;
    if (el.isContentEditable && doc.activeElement !== target) {
      const range = doc.createRange();
      range.selectNodeContents(el);
      range.collapse(false);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    }
    if (!wasFocused || !isText) {
      if (!isShown(target, true) && doc.activeElement !== target) {
        fail('notinteractable', 'element not interactable: ' + describe(el));
      }
      if (target.disabled) fail('notinteractable', 'element not interactable: ' + describe(el) + ' is disabled');
      if (doc.activeElement !== target) {
        if (doc.activeElement) doc.activeElement.blur();
        target.focus();
      }
      if (doc.activeElement !== target) {
        fail('notinteractable', 'element not interactable: cannot focus ' + describe(el));
      }
    }
    if (isText && !wasFocused) {
      try { el.setSelectionRange(el.value.length, el.value.length); } catch (e) { /* types without a selection */ }
    }
  }
  function setValue(el, text, events) {
    live(el).value = text;
    if (events) { fire(el, 'input'); fire(el, 'change'); }
  }
  function typeAhead(select, text) {
    // Chrome's type-ahead on a closed <select>: a repeated first character cycles through the
    // options starting with it (from the one after the selection), longer input matches a prefix.
    live(select);
    const options = Array.from(select.options);
    if (!options.length) return;
    const label = (o) => (o.label || o.text || '').replace(/\s+/g, ' ').trim().toLowerCase();
    let buffer = '';
    for (const ch of text.toLowerCase()) {
      buffer += ch;
      const cycling = Array.from(buffer).every((c) => c === buffer[0]);
      const prefix = cycling ? buffer[0] : buffer;
      const start = Math.max(select.selectedIndex, 0) + (cycling ? 1 : 0);
      for (let k = 0; k < options.length; k++) {
        const i = (start + k) % options.length;
        if (!options[i].disabled && label(options[i]).startsWith(prefix)) {
          if (i !== select.selectedIndex) {
            select.selectedIndex = i;
            fire(select, 'input');
            fire(select, 'change');
          }
          break;
        }
      }
    }
  }
  function submit(el) {
    // Selenium 4's WebElement.submit() script: find the form, dispatch a cancelable submit event
    // and submit natively unless a listener prevented it.
    let form = live(el);
    while (form.nodeName !== 'FORM' && form.parentNode) form = form.parentNode;
    if (!form || !form.ownerDocument) fail('noform', 'To submit an element, it must be nested inside a form element');
    const e = form.ownerDocument.createEvent('Event');
    e.initEvent('submit', true, true);
    if (!form.dispatchEvent(e)) return false;
    HTMLFormElement.prototype.submit.call(form);
    return true;  // a navigation is now pending
  }

  // --- read-only element properties ---------------------------------------------------------
  const BOOLEAN_ATTRIBUTES = new Set(['allowfullscreen', 'allowpaymentrequest', 'allowusermedia', 'async',
    'autofocus', 'autoplay', 'checked', 'compact', 'complete', 'controls', 'declare', 'default',
    'defaultchecked', 'defaultselected', 'defer', 'disabled', 'ended', 'formnovalidate', 'hidden',
    'indeterminate', 'iscontenteditable', 'ismap', 'itemscope', 'loop', 'multiple', 'muted', 'nohref',
    'nomodule', 'noresize', 'noshade', 'novalidate', 'nowrap', 'open', 'paused', 'playsinline', 'pubdate',
    'readonly', 'required', 'reversed', 'scoped', 'seamless', 'seeking', 'selected', 'truespeed',
    'typemustmatch', 'willvalidate']);
  const PROPERTY_ALIASES = { 'class': 'className', 'readonly': 'readOnly' };
  function attribute(el, name) {
    // Selenium's getAttribute atom: properties win over attributes for most names.
    live(el);
    const lower = name.toLowerCase();
    const tag = tagOf(el);
    if (lower === 'style') return el.style ? el.style.cssText : el.getAttribute('style');
    const selectable = tag === 'option' || (tag === 'input' && ['checkbox', 'radio'].includes(inputType(el)));
    if ((lower === 'selected' || lower === 'checked') && selectable) return isSelected(el) ? 'true' : null;
    if ((tag === 'img' && lower === 'src') || (tag === 'a' && lower === 'href')) {
      return el.getAttribute(lower) === null ? null : String(el[lower]);
    }
    const prop = PROPERTY_ALIASES[lower] || name;
    if (BOOLEAN_ATTRIBUTES.has(lower)) return (el.getAttribute(name) !== null || !!el[prop]) ? 'true' : null;
    let value = el[prop];
    if (value === null || value === undefined || typeof value === 'object' || typeof value === 'function') {
      value = el.getAttribute(name);
    }
    return value === null || value === undefined ? null : String(value);
  }
  function isSelected(el) {
    live(el);
    if (tagOf(el) === 'option') return el.selected;
    if (['checkbox', 'radio'].includes(inputType(el))) return el.checked;
    return false;
  }
  function rect(el) {
    const r = live(el).getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  }
  function info(el, what, arg) {
    live(el);
    switch (what) {
      case 'tag': return tagOf(el);
      case 'text': return isShown(el, false) ? visibleText(el) : '';
      case 'displayed': return isShown(el, false);
      case 'enabled': return !el.disabled;
      case 'selected': return isSelected(el);
      case 'rect': return rect(el);
      case 'attribute': return attribute(el, arg);
      case 'dom_attribute': return el.getAttribute(arg);
      case 'property': {
        const v = el[arg];
        return (v === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof v)) ? v : String(v);
      }
      case 'css': return cssValue(el, arg);
    }
    fail('unsupported', what);
  }

  return { find, isShown, visibleText, cssValue, standardizeColor, xpath, pointerPoint, clickPoint,
    clickOption, clear, kind, focusForKeys, setValue, typeAhead, submit, info, live, describe };
})();
"""

#: ``(element, [name, args]) => H[name](element, ...args)`` for ElementHandle.evaluate.
ELEMENT_CALL = "(el, call) => {" + HELPERS + "\n return H[call[0]](el, ...call[1]); }"

#: ``([root, using, value]) => elements`` for evaluate_handle (root may be null: the document).
FIND_CALL = "(a) => {" + HELPERS + "\n return H.find(a[0], a[1], a[2]); }"
