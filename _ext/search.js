// The search page's own script: Sphinx's html_search_scorer (_config.yml) puts this file into
// language_data.js, which the search page alone loads, after searchtools.js: the one public
// hook that runs a script there. Two things Sphinx's search does not do for this theme:
//
// - Rank a chapter above the API page for a word of the chapter's text: the API page's
//   section titles name the modules ("Rotary position embedding"), and a title match (15)
//   outranks a text match (5), so "rotary" listed the API page first, chapter 4 after it. A
//   chapter's text match counts 11 more (16): above a section title, below the name of one of
//   posenc's functions (26 and more), which still leads to its entry in the API page.
// - Make each result's excerpt from the page's article only: Sphinx takes the text of the
//   page's role="main" element, which in this theme also holds the article's header (its
//   download menu ".ipynb .md .pdf", its buttons) and the page's contents list (written for
//   printing), so excerpts began with "....ipynb .md .pdf ... Contents 4.1. The goal ...".
var Scorer = {
  score: (result) => {
    const [docname, , , , score] = result;
    return docname.startsWith("chapters/") && score === Scorer.term ? score + 11 : score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};

(() => {
  const toText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page.querySelectorAll(".bd-header-article, #jb-print-docs-body, .bd-sidebar-secondary, .prev-next-area, .bd-footer-article")
      .forEach((el) => el.remove());
    return toText(page.documentElement.outerHTML, anchor);
  };
})();
