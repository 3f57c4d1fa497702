// mediacheck's HTML report: says how many cases the outcome filter shows, and filters itself where the
// browser has no CSS :has() (where it has, report.css filters, with or without this script).
(function () {
    'use strict';
    const boxes = Array.from(document.querySelectorAll('input[data-filter]'));
    const cases = Array.from(document.querySelectorAll('.case'));
    const status = document.getElementById('shown');
    const cssFilters = !!(window.CSS && CSS.supports && CSS.supports('selector(:has(*))'));
    function update() {
        const on = new Set(boxes.filter((box) => box.checked).map((box) => box.value));
        let shown = 0;
        for (const item of cases) {
            const show = on.has(item.dataset.outcome);
            if (!cssFilters) item.hidden = !show;
            if (show) shown += 1;
        }
        if (!cssFilters) {
            for (const section of document.querySelectorAll('section.spec')) {
                section.hidden = !section.querySelector('.case:not([hidden])');
            }
        }
        status.textContent = shown + ' of ' + cases.length + ' cases shown';
    }
    for (const box of boxes) box.addEventListener('change', update);
    update();
})();
