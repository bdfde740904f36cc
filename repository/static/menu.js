// The phone header's menu button: without this script it is a link that opens the menu through CSS (:target);
// with it, a button that opens and closes the menu in place and says which state it is in (aria-expanded).
(function () {
  var button = document.querySelector("header.site .menu-button");
  var menu = document.getElementById("site-menu");
  if (!button || !menu) return;
  button.setAttribute("role", "button");
  button.setAttribute("aria-expanded", "false");
  function set(open) {
    menu.classList.toggle("open", open);
    button.setAttribute("aria-expanded", open ? "true" : "false");
  }
  button.addEventListener("click", function (event) {
    event.preventDefault();
    set(!menu.classList.contains("open"));
  });
  var close = menu.querySelector(".menu-close a");
  if (close) close.addEventListener("click", function (event) {
    event.preventDefault();
    set(false);
    button.focus();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && menu.classList.contains("open")) { set(false); button.focus(); }
  });
})();
