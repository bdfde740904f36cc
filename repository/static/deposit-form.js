// The deposit form (templates/pages/deposit/form.html), better with JavaScript. Without it every button posts the
// form and the server answers with the form changed; with it:
// - "Add …" and "Remove" change a repeatable group's rows in place (the server reads rows in index order, so a new
//   row takes the next free index and gaps are fine);
// - the pickers (license, grant, community) ask the API's searches for suggestions as one types;
// - fields that do not apply to the chosen upload type or access right are hidden;
// - leaving the page with unsaved changes asks first;
// - after a refused save (and on the review step before publishing) the error summary takes the focus.
(function () {
  'use strict';
  var summary = document.getElementById('error-summary');
  if (summary) { summary.focus(); }
  var form = document.querySelector('[data-deposit-form]');
  if (!form) { return; }

  function rowsOf(group) {
    return Array.prototype.slice.call(group.querySelectorAll('[data-rows] > [data-row]'));
  }

  function renumber(group) {
    var rows = rowsOf(group);
    rows.forEach(function (row, i) {
      row.querySelectorAll('[data-row-number]').forEach(function (n) { n.textContent = String(i + 1); });
    });
    var empty = group.querySelector('[data-empty]');
    if (empty) { empty.hidden = rows.length > 0; }
  }

  function nextIndex(group) {
    var key = group.getAttribute('data-group');
    var pattern = new RegExp('^' + key + '-(\\d+)');
    var next = 0;
    group.querySelectorAll('[data-rows] [name]').forEach(function (input) {
      var found = pattern.exec(input.name);
      if (found) { next = Math.max(next, Number(found[1]) + 1); }
    });
    return next;
  }

  function addRow(group) {
    var template = group.querySelector('template[data-row-template]');
    var html = template.innerHTML.split('__i__').join(String(nextIndex(group)));
    var holder = document.createElement('div');
    holder.innerHTML = html.trim();
    var row = holder.firstElementChild;
    group.querySelector('[data-rows]').appendChild(row);
    renumber(group);
    var first = row.querySelector('input, select, textarea');
    if (first) { first.focus(); }
  }

  function removeRow(group, row) {
    row.parentNode.removeChild(row);
    renumber(group);
    var add = group.querySelector('[data-add-row]');
    if (add) { add.focus(); }
  }

  form.addEventListener('click', function (event) {
    var button = event.target.closest('button');
    if (!button) { return; }
    var group = button.closest('[data-group]');
    if (!group) { return; }
    if (button.hasAttribute('data-add-row')) {
      event.preventDefault();
      addRow(group);
    } else if (button.hasAttribute('data-remove-row')) {
      event.preventDefault();
      removeRow(group, button.closest('[data-row]'));
    }
  });

  // Pickers: the <datalist> the server filled is refined by the API's search for what was typed.
  function label(hit) {
    var m = hit.metadata;
    if (m) {
      return [m.acronym, m.title, m.funder && m.funder.name].filter(Boolean).join(' — ');
    }
    return hit.title || '';
  }

  var timers = new WeakMap();
  var served = new WeakMap();  // each datalist's suggestions from the server, back when the input is cleared
  form.addEventListener('input', function (event) {
    var input = event.target;
    var lookup = input.getAttribute && input.getAttribute('data-lookup');
    if (!lookup || !input.list) { return; }
    if (!served.has(input.list)) { served.set(input.list, input.list.innerHTML); }
    clearTimeout(timers.get(input));
    timers.set(input, setTimeout(function () {
      var q = input.value.trim();
      if (q.length < 2) {
        input.list.innerHTML = served.get(input.list);
        return;
      }
      fetch(lookup + '?size=20&q=' + encodeURIComponent(q), {headers: {Accept: 'application/vnd.service.v1+json'},
                                                             credentials: 'same-origin'})
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) {
          if (!body || !body.hits || !body.hits.hits.length) { return; }
          var list = input.list;
          list.textContent = '';
          body.hits.hits.forEach(function (hit) {
            var option = document.createElement('option');
            option.value = hit.id;
            option.textContent = label(hit);
            list.appendChild(option);
          });
        })
        .catch(function () { /* the server-side suggestions stay */ });
    }, 250));
  });

  // Fields that apply only to some upload types or access rights.
  function fieldOf(name) {
    var input = form.querySelector('[name="' + name + '"]');
    return input ? input.closest('.field') : null;
  }

  function show(name, visible) {
    var f = fieldOf(name);
    if (f && !f.classList.contains('invalid')) { f.hidden = !visible; }
  }

  function applies() {
    var type = form.querySelector('[name="upload_type"]');
    if (type) {
      show('publication_type', type.value === 'publication');
      show('image_type', type.value === 'image');
    }
    var right = form.querySelector('[name="access_right"]:checked');
    if (right) {
      show('license', right.value === 'open' || right.value === 'embargoed');
      show('embargo_date', right.value === 'embargoed');
      show('access_conditions', right.value === 'restricted');
    }
  }

  form.addEventListener('change', function (event) {
    if (event.target.name === 'upload_type' || event.target.name === 'access_right') { applies(); }
  });
  applies();

  // Leaving the page with unsaved changes (a link, a form of the file area) asks first.
  var dirty = false;
  function changed() { dirty = true; }
  form.addEventListener('input', changed);
  form.addEventListener('change', changed);
  form.addEventListener('click', function (event) {
    if (event.target.closest('[data-add-row], [data-remove-row]')) { changed(); }
  });
  form.addEventListener('submit', function () { dirty = false; });
  window.addEventListener('beforeunload', function (event) {
    if (dirty) {
      event.preventDefault();
      event.returnValue = '';
    }
  });
}());
