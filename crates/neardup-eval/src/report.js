// Tabs for the two cluster lists. Without this script both lists are simply shown one after
// the other; the page never depends on it.
(function () {
  "use strict";
  var tabs = Array.prototype.slice.call(document.querySelectorAll("[data-tab]"));
  function show(name) {
    tabs.forEach(function (tab) {
      var panel = document.getElementById(tab.getAttribute("data-tab"));
      var selected = tab.getAttribute("data-tab") === name;
      tab.setAttribute("aria-selected", selected ? "true" : "false");
      if (panel) {
        panel.hidden = !selected;
      }
    });
  }
  tabs.forEach(function (tab) {
    tab.addEventListener("click", function () {
      show(tab.getAttribute("data-tab"));
    });
  });
  if (tabs.length > 0) {
    show(tabs[0].getAttribute("data-tab"));
  }
  document.documentElement.setAttribute("data-ready", "true");
})();
