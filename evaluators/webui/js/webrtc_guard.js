// WebRTC reaches its STUN and TURN servers from the network stack, where no route sees it: the
// servers a page names are recorded and removed before WebRTC gets them (the missing network and
// the WebRTC flags stop them anyway; this is what makes the attempt visible in the record).
// Added to every page before its own scripts. __REPORT_BINDING__ is replaced, when the file is
// read, by the name of the binding through which the page's guards report what they took away.
(() => {
  const Original = window.RTCPeerConnection;
  if (typeof Original !== 'function') return;
  const report = (config) => {
    try {
      for (const server of (config && config.iceServers) || [])
        for (const url of [].concat(server.urls || server.url || [])) window.__REPORT_BINDING__(String(url));
    } catch (e) {}
  };
  const strip = (config) => (config && config.iceServers) ? Object.assign({}, config, {iceServers: []}) : config;
  const setConfiguration = Original.prototype.setConfiguration;
  Original.prototype.setConfiguration = function (config) {
    report(config);
    return setConfiguration.call(this, strip(config));
  };
  const Guarded = new Proxy(Original, {construct(target, args, newTarget) {
    report(args[0]);
    return Reflect.construct(target, [strip(args[0]), ...args.slice(1)], newTarget);
  }});
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection'])
    if (window[name] === Original) window[name] = Guarded;
})();
