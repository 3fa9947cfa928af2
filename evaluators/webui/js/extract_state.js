// The body of the function that reads one state, run as `(args) => { <HELPERS> <this file> }`
// (evaluators/webui/live_page.py), so `H` is the helpers object of selenium_compat/_dom.py.
// args.props: the computed-style properties to report; args.boundingBox: sizes from the bounding
// box instead of what webdriver reports (the "bounding-box" geometry).
//
// Boxes as chromedriver's Get Element Rect returns them (checked against chromedriver 156):
// x, y are the bounding box's top-left corner plus the page scroll, unrounded; width and height
// come from the GET_SIZE atom, i.e. offsetWidth/offsetHeight (whole layout pixels, transforms
// ignored) for HTML elements, and the bounding box's size for elements without offset sizes (SVG)
// or whose offset sizes are both 0. Selenium's Python `rect` passes these values on unrounded.
// The atom briefly restyles a display:none element to measure it; such elements are never
// "displayed", so their size is never used and is not measured here (nothing is written).
  const props = args.props, boundingBox = args.boundingBox;
  const body = document.body;
  if (!body) return '{"elements": [], "dom": {}}';
  const elements = [];
  const dom = {};
  const sx = window.scrollX, sy = window.scrollY;
  const size = (el, r) => {
    if (boundingBox) return [r.width, r.height];
    const w = el.offsetWidth, h = el.offsetHeight;
    if (typeof w !== 'number' || typeof h !== 'number' || (w === 0 && h === 0)) return [r.width, r.height];
    return [w, h];
  };
  for (const el of body.getElementsByTagName('*')) {
    const path = H.xpath(el);
    dom[path] = el.outerHTML;
    const r = el.getBoundingClientRect();
    const [width, height] = size(el, r);
    if (!(width * height > 0.1) || !H.isShown(el, false)) continue;
    const styles = {};
    for (const name of props) styles[name] = H.cssValue(el, name);
    const attributes = {};
    for (const a of el.attributes) attributes[a.name] = a.value;
    elements.push({ tag: el.tagName.toLowerCase(), rect: [r.left + sx, r.top + sy, width, height],
      text: H.visibleText(el), attributes, styles, descendants: el.getElementsByTagName('*').length, xpath: path });
  }
  // one string: Playwright serializes a large object value by value, JSON text in one piece
  return JSON.stringify({ elements, dom });
