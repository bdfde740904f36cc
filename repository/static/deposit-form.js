// The deposit form (templates/pages/deposit/form.html), better with JavaScript. Without it every button posts the
// form and the server answers with the form changed; with it:
// - "Add …" and "Remove" change a repeatable group's rows in place (the server reads rows in index order, so a new
//   row takes the next free index and gaps are fine);
// - the pickers (license, language, person, affiliation, grant, community, subject) ask the API for suggestions as one
//   types; picking an organisation fills in its ROR id;
// - ORCID iDs are checked (form and check digit) as they are typed;
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
    // The button says what the server's page would: "Add a …" with no rows, "Add another …" after one.
    var add = group.querySelector('[data-add-row]');
    if (add) { add.textContent = add.getAttribute(rows.length ? 'data-label-more' : 'data-label-first'); }
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

  // Pickers: the <datalist> the server filled is refined by the suggestions for what was typed (the API's
  // /api/vocabularies/ answers {hits: [...]}, its community and grant searches {hits: {hits: [...]}}). Picking an
  // organisation fills in the row's ROR id; picking a person fills in the row's empty ORCID and affiliation; picking
  // a subject term fills in its empty identifier.
  function option(hit) {
    if (hit.term !== undefined) { return [hit.term, hit.identifier + ' · ' + hit.vocabulary]; }  // a subject term
    if (hit.metadata) {  // a grant
      var m = hit.metadata;
      return [hit.id, [m.acronym, m.title, m.funder && m.funder.name].filter(Boolean).join(' — ')];
    }
    if (hit.status !== undefined) {  // an organisation
      return [hit.name, [hit.id, hit.acronyms.join(', '), hit.country].filter(Boolean).join(' · ')];
    }
    if (hit.orcid !== undefined || hit.affiliation !== undefined || hit.gnd !== undefined) {  // a person
      return [hit.name, [hit.orcid, hit.affiliation].filter(Boolean).join(' · ')];
    }
    if (hit.curation_policy !== undefined) { return [hit.title || hit.id, hit.id]; }  // a community
    if (hit.url !== undefined) { return [hit.id, hit.title]; }  // a license
    return [hit.name || hit.id, hit.id];  // a language
  }

  function sibling(input, sub) {
    var name = input.name.replace(/-[a-z_]+$/, '-' + sub);
    return form.querySelector('[name="' + name + '"]');
  }

  var timers = new WeakMap();
  var served = new WeakMap();  // each datalist's suggestions from the server, back when the input is cleared
  var found = new WeakMap();   // each input's last suggestions, by the value that picks them
  function picked(input) {
    var hit = (found.get(input) || {})[input.value];
    if (/-affiliation$/.test(input.name)) {
      var ror = sibling(input, 'affiliation_id');
      if (!ror) { return; }
      if (hit && hit.status !== undefined) {
        ror.value = hit.id;
        ror.setAttribute('data-picked', input.value);
      } else if (ror.getAttribute('data-picked') && ror.getAttribute('data-picked') !== input.value) {
        ror.value = '';  // the organisation picked before was changed: its id no longer applies
        ror.removeAttribute('data-picked');
      }
    } else if (/-term$/.test(input.name) && hit && hit.term !== undefined) {
      var identifier = sibling(input, 'identifier');
      if (identifier && !identifier.value) { identifier.value = hit.identifier; }
    } else if (/-name$/.test(input.name) && hit) {
      ['orcid', 'affiliation', 'affiliation_id', 'gnd'].forEach(function (sub) {
        var other = sibling(input, sub);
        if (other && !other.value && hit[sub]) { other.value = hit[sub]; }
      });
    }
  }

  form.addEventListener('change', function (event) {
    if (event.target.getAttribute && event.target.getAttribute('data-lookup')) { picked(event.target); }
  });
  form.addEventListener('input', function (event) {
    var input = event.target;
    var lookup = input.getAttribute && input.getAttribute('data-lookup');
    if (!lookup || !input.list) { return; }
    picked(input);
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
          var hits = body && (Array.isArray(body.hits) ? body.hits : body.hits && body.hits.hits);
          if (!hits || !hits.length) { return; }
          var list = input.list;
          var byValue = {};
          list.textContent = '';
          hits.forEach(function (hit) {
            var pair = option(hit);
            var item = document.createElement('option');
            item.value = pair[0];
            item.textContent = pair[1] || '';
            list.appendChild(item);
            byValue[pair[0]] = hit;
          });
          found.set(input, byValue);
          picked(input);
        })
        .catch(function () { /* the server-side suggestions stay */ });
    }, 250));
  });

  // ORCID iDs are checked as they are typed (the server checks them again, in the same words): 16 digits, the
  // last one (or X) the check digit of the others (ISO 7064 MOD 11-2).
  function orcidProblem(value) {
    var m = /^(?:https?:\/\/(?:www\.)?orcid\.org\/)?(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dXx])$/.exec(value.trim());
    if (!m) {
      return 'An ORCID iD is 16 digits in four groups of four, the last one possibly X, e.g. ' +
             '0000-0002-1825-0097 (or its https://orcid.org/ address).';
    }
    var digits = (m[1] + m[2] + m[3] + m[4]).toUpperCase();
    var total = 0;
    for (var i = 0; i < 15; i++) { total = (total + Number(digits[i])) * 2; }
    var check = (12 - total % 11) % 11;
    if (digits[15] !== (check === 10 ? 'X' : String(check))) {
      return 'This ORCID iD does not exist: its last character does not match the others (a digit is ' +
             'probably mistyped). Copy it from your ORCID record, e.g. 0000-0002-1825-0097.';
    }
    return '';
  }

  function showCheck(input, problem) {
    var id = input.id + '-error';
    var message = document.getElementById(id);
    var field = input.closest('.field');
    var described = (input.getAttribute('aria-describedby') || '').split(' ').filter(function (x) {
      return x && x !== id;
    });
    if (problem) {
      if (!message) {
        message = document.createElement('p');
        message.className = 'field-error';
        message.id = id;
        input.insertAdjacentElement('afterend', message);
      }
      message.textContent = problem;
      described.push(id);
      input.setAttribute('aria-invalid', 'true');
      field.classList.add('invalid');
    } else {
      if (message) { message.parentNode.removeChild(message); }
      input.removeAttribute('aria-invalid');
      field.classList.remove('invalid');
    }
    if (described.length) { input.setAttribute('aria-describedby', described.join(' ')); }
    else { input.removeAttribute('aria-describedby'); }
  }

  function check(input, leaving) {
    var value = input.value.trim();
    // While typing, a value is judged once it is long enough to be whole; on leaving the field, always.
    var whole = value.replace(/^https?:\/\/(www\.)?orcid\.org\//, '').replace(/-/g, '').length >= 16;
    if (!value) { showCheck(input, ''); } else if (leaving || whole) { showCheck(input, orcidProblem(value)); }
  }

  form.addEventListener('input', function (event) {
    if (event.target.getAttribute && event.target.getAttribute('data-check') === 'orcid') { check(event.target, false); }
  });
  form.addEventListener('focusout', function (event) {
    if (event.target.getAttribute && event.target.getAttribute('data-check') === 'orcid') { check(event.target, true); }
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

  // The upload type's default license is shown chosen, as publishing would apply it, unless one was chosen.
  function defaultLicense(type) {
    var input = form.querySelector('[name="license"][data-defaults]');
    if (!input || !type) { return; }
    var defaults = JSON.parse(input.getAttribute('data-defaults'));
    var all = Object.keys(defaults).map(function (k) { return defaults[k]; });
    if (!input.value || all.indexOf(input.value) >= 0) {
      input.value = Object.prototype.hasOwnProperty.call(defaults, type) ? defaults[type] : defaults[''];
    }
  }

  form.addEventListener('change', function (event) {
    if (event.target.name === 'upload_type' || event.target.name === 'access_right') { applies(); }
    if (event.target.name === 'upload_type') { defaultLicense(event.target.value); }
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
