// ReDoc's side menu shows the Redocly logo from Redocly's own host. The site's pages load nothing
// from another host (its Content-Security-Policy would refuse the image, with a console error), so
// on this page an image from elsewhere is given no source: ReDoc drops its logo when it fails.
(function () {
  "use strict";

  function elsewhere(value) {
    try {
      var url = new URL(String(value), document.baseURI);
      return (url.protocol === "http:" || url.protocol === "https:") && url.origin !== window.location.origin;
    } catch (e) {
      return false;
    }
  }

  var setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (this instanceof HTMLImageElement && String(name).toLowerCase() === "src" && elsewhere(value)) {
      value = "";
    }
    return setAttribute.call(this, name, value);
  };

  var src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    configurable: true,
    enumerable: src.enumerable,
    get: src.get,
    set: function (value) { src.set.call(this, elsewhere(value) ? "" : value); }
  });
})();
