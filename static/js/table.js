/* The table page sends moves over its WebSocket only while the socket is open.

   The htmx ws extension would queue a message sent before its socket opens, invisibly, and keep
   it for good if the socket closes without reconnecting. Here a move made while the socket is
   not open (right after the page loads, or while the connection is down) is held by this script
   instead: the form keeps what was typed, a status line says the move will be sent, and it is
   sent when htmx:wsOpen reports the socket open (after a reconnect too). Submitting again while
   it waits holds the same form once; nothing is sent twice.
   Without JavaScript none of this runs and the form is a plain POST. */
(function () {
  var open = false;
  var held = null;  // the move form submitted while the socket was not open

  function update() {
    var status = document.getElementById('socket-status');
    if (status) {
      status.hidden = open;
      status.textContent = held
        ? 'Connecting to the table… your move will be sent as soon as the connection is open.'
        : 'Connecting to the table… you can move as soon as the connection is open.';
    }
  }

  document.addEventListener('htmx:wsConnecting', function () { open = false; update(); });
  document.addEventListener('htmx:wsClose', function () { open = false; update(); });
  document.addEventListener('htmx:wsOpen', function () {
    open = true;
    update();
    var form = held;
    held = null;
    if (form && document.body.contains(form)) {
      form.requestSubmit();  // the server judges it against the table as it is now
    }
  });
  document.addEventListener('htmx:wsConfigSend', function (event) {
    if (open) {
      return;
    }
    event.preventDefault();  // not into the extension's queue
    if (event.detail.triggeringEvent) {
      event.detail.triggeringEvent.preventDefault();  // and not as a page POST either
    }
    if (event.detail.elt && event.detail.elt.classList.contains('move-form')) {
      held = event.detail.elt;
      update();
    }
  });
})();
