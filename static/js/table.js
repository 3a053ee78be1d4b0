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

/* The Guess control: its input may only hold one of the candidate words of its datalist (any
   case). Anything else is marked invalid with a message saying so, and the browser does not send
   the form; the server refuses such a guess too, with the same reason, for clients without this
   script. */
(function () {
  function check(input) {
    var list = document.getElementById(input.getAttribute('list'));
    var typed = input.value.trim().toLowerCase();
    var known = !typed || Array.prototype.some.call(list ? list.options : [], function (option) {
      return option.value.toLowerCase() === typed;
    });
    input.setCustomValidity(known ? '' : '"' + input.value.trim() + '" is not one of the '
      + (list ? list.options.length : '') + ' candidate words; pick a word from the list.');
  }

  document.addEventListener('input', function (event) {
    if (event.target.matches && event.target.matches('.guess-form input[list]')) {
      check(event.target);
    }
  });
})();

/* The live region: a screen reader hears the newest move only. The board is replaced whole on
   every push, so it is not itself a live region (that would read the whole board out each time,
   and heartbeats resend it unchanged); after each push whose seq is new, the one-line announcer
   beside it gets the game's result if the game is over, else the newest line of the board's log
   (the question and its answer, the clue). Errors announce themselves (role="alert"). */
(function () {
  var shown = null;

  function seqOf(board) {
    return board ? board.getAttribute('data-seq') : null;
  }

  function newest(board) {
    var result = board.querySelector('#result');
    if (result) {
      var heading = result.querySelector('h2, h3, p');
      return (heading || result).textContent;
    }
    var lines = board.querySelectorAll('.log li:not(.muted)');
    return lines.length ? lines[lines.length - 1].textContent : '';
  }

  document.addEventListener('DOMContentLoaded', function () {
    shown = seqOf(document.getElementById('board'));
  });
  document.addEventListener('htmx:wsAfterMessage', function () {
    var board = document.getElementById('board');
    var announcer = document.getElementById('announcer');
    var seq = seqOf(board);
    if (!board || !announcer || seq === shown) {
      return;
    }
    shown = seq;
    announcer.textContent = newest(board).replace(/\s+/g, ' ').trim();
  });
})();
