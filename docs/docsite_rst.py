"""The guides (docs/*.md) as the collection's extra docs (docs/docsite/rst/*.rst).

Galaxy and Automation Hub show docs/*.md as they are (galaxy-importer renders every Markdown file
at the top of docs/); the Ansible docsite and antsibull-docs sites read extra docs, which are RST
listed in docs/docsite/extra-docs.yml. The Markdown stays the one source: this script converts it
with pandoc (pypandoc_binary, pinned in requirements-test.txt, so every machine writes the same RST)
and rewrites its links on pandoc's syntax tree:

- a link to another guide (``strategy.md#anchor``) becomes ``:ref:`` to that guide's label;
- a link out of docs/ (``../examples/...``, ``dev/...``: not every copy of the collection has them)
  and an image becomes an address in the repository;
- a link to a file that does not exist is an error, as is a guide that extra-docs.yml does not list
  exactly once, or a listed page that is not a guide.

    .venv/bin/python docs/docsite_rst.py write   rewrite docs/docsite/rst/ (after editing a guide)
    .venv/bin/python docs/docsite_rst.py check   fail if docs/docsite/rst/ is not what `write` would make (make docs-lint)
"""
import json
import os
import sys

import pypandoc
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, 'docs')
RST = os.path.join(DOCS, 'docsite', 'rst')
EXTRA_DOCS = os.path.join(DOCS, 'docsite', 'extra-docs.yml')
REPOSITORY = 'https://github.com/nodewright/bridge/blob/main/'
RAW = 'https://raw.githubusercontent.com/nodewright/bridge/main/'
LABEL_PREFIX = 'ansible_collections.nodewright.bridge.docsite.'
COLUMNS = '110'


def label(name, anchor=''):
    """The RST label of a guide, or of one of its sections: antsibull-docs wants every label of the
    extra docs to start with LABEL_PREFIX, so the sections' (GitHub's anchors, as pandoc makes them
    from the headings) are the guide's label and the anchor."""
    return LABEL_PREFIX + name.replace('-', '_') + ('.' + anchor if anchor else '')


def guides():
    return sorted(f[:-3] for f in os.listdir(DOCS) if f.endswith('.md'))


def listed_pages():
    """The pages extra-docs.yml's toctrees name, in order; a problem for each one listed twice."""
    with open(EXTRA_DOCS) as handle:
        extra = yaml.safe_load(handle)
    pages = [entry if isinstance(entry, str) else entry['ref']
             for section in extra['sections'] for entry in section['toctree']]
    twice = sorted({page for page in pages if pages.count(page) > 1})
    return pages, ['%s: %s listed more than once' % (os.path.relpath(EXTRA_DOCS, ROOT), page) for page in twice]


def plain_text(inlines):
    """The words of a link, without their markup (a :ref:'s title is plain text)."""
    words = []
    for item in inlines:
        kind, content = item['t'], item.get('c')
        if kind in ('Str', 'Code'):
            words.append(content if kind == 'Str' else content[1])
        elif kind in ('Space', 'SoftBreak', 'LineBreak'):
            words.append(' ')
        elif isinstance(content, list):
            words.append(plain_text(content[-1] if kind in ('Link', 'Span', 'Image') else content))
    return ''.join(words)


def walk(node, visit):
    """Call visit on every element of pandoc's tree; an element it returns replaces the one visited."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            node[index] = walk(item, visit)
        return node
    if isinstance(node, dict) and 't' in node:
        node = visit(node) or node
        if 'c' in node:
            walk(node['c'], visit)
    return node


class Guides(object):
    """Every guide's tree and section anchors, read once: a link names a page and an anchor of it."""

    def __init__(self, names):
        self.trees = {}
        self.anchors = {}
        for name in names:
            with open(os.path.join(DOCS, name + '.md')) as handle:
                self.trees[name] = json.loads(pypandoc.convert_text(handle.read(), 'json', format='gfm'))
            self.anchors[name] = set()
            walk(self.trees[name]['blocks'], lambda node, name=name: self._anchor(name, node))

    def _anchor(self, name, node):
        if node['t'] == 'Header':
            self.anchors[name].add(node['c'][1][0])

    def retarget(self, target, source, problems):
        """A link's new form: ('ref', label), ('url', address) or None (left as it is)."""
        if target.startswith(('http://', 'https://', 'mailto:')):
            return None
        path, dummy, anchor = target.partition('#')
        full = os.path.normpath(os.path.join(DOCS, path)) if path else os.path.join(DOCS, source + '.md')
        if not os.path.exists(full):
            problems.append('docs/%s.md: link to %s, which does not exist' % (source, target))
            return None
        if os.path.dirname(full) == DOCS and full.endswith('.md'):
            page = os.path.basename(full)[:-3]
            if anchor and anchor not in self.anchors[page]:
                problems.append('docs/%s.md: link to %s, which has no heading #%s' % (source, path or source + '.md', anchor))
            return 'ref', label(page, anchor)
        return 'url', REPOSITORY + os.path.relpath(full, ROOT) + ('/' if os.path.isdir(full) else '')

    def rst(self, name, problems):
        """The RST page of docs/<name>.md."""
        def visit(node):
            kind = node['t']
            if kind == 'Header':
                node['c'][1][0] = label(name, node['c'][1][0])
            elif kind == 'Link':
                new = self.retarget(node['c'][2][0], name, problems)
                if new and new[0] == 'ref':
                    text = ' '.join(plain_text(node['c'][1]).split()).replace('<', r'\<')
                    # a link that reads as its file name (semantics.md) reads as the page's title
                    ref = new[1] if text == node['c'][2][0] else '%s <%s>' % (text, new[1])
                    return {'t': 'RawInline', 'c': ['rst', ':ref:`%s`' % ref]}
                if new:
                    node['c'][2][0] = new[1]
            elif kind == 'Image' and not node['c'][2][0].startswith(('http://', 'https://')):
                node['c'][2][0] = RAW + os.path.relpath(os.path.normpath(os.path.join(DOCS, node['c'][2][0])), ROOT)
            elif kind == 'CodeBlock' and node['c'][0][1] == ['yaml'] and not one_yaml_document(node['c'][1]):
                # a fragment (an elision, several documents): highlighted as Ansible's docs do, not
                # parsed as one document by the docsite's checker (rstcheck)
                node['c'][0][1] = ['yaml+jinja']
            return None
        tree = json.loads(json.dumps(self.trees[name]))
        walk(tree['blocks'], visit)
        body = pypandoc.convert_text(json.dumps(tree), 'rst', format='json', extra_args=['--columns=' + COLUMNS])
        return ('..\n  Made from docs/%s.md by docs/docsite_rst.py; edit that file, then run python docs/docsite_rst.py write.\n\n'
                '.. _%s:\n\n%s' % (name, label(name), body))


def one_yaml_document(text):
    try:
        yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    return True


def pages():
    """``({file name: text}, problems)``: every page docs/docsite/rst/ should hold."""
    names = guides()
    listed, problems = listed_pages()
    problems += ['%s: docs/%s.md is not listed in a toctree' % (os.path.relpath(EXTRA_DOCS, ROOT), name)
                 for name in names if name not in listed]
    problems += ['%s: %s is not a guide (no docs/%s.md)' % (os.path.relpath(EXTRA_DOCS, ROOT), page, page)
                 for page in listed if page not in names]
    every = Guides(names)
    return {name + '.rst': every.rst(name, problems) for name in names}, problems


def main(command):
    wanted, problems = pages()
    if problems:
        sys.exit('\n'.join(problems))
    present = {f: open(os.path.join(RST, f)).read() for f in os.listdir(RST)} if os.path.isdir(RST) else {}
    if command == 'check':
        stale = sorted(f for f in set(wanted) | set(present) if wanted.get(f) != present.get(f))
        if stale:
            sys.exit('docs/docsite/rst/ is not made from docs/*.md (run python docs/docsite_rst.py write): ' + ', '.join(stale))
        print('docs/docsite/rst/: %d pages, each made from its guide' % len(wanted))
        return
    os.makedirs(RST, exist_ok=True)
    for name in set(present) - set(wanted):
        os.remove(os.path.join(RST, name))
    for name, text in wanted.items():
        with open(os.path.join(RST, name), 'w') as handle:
            handle.write(text)
    print('docs/docsite/rst/: wrote %d pages' % len(wanted))


if __name__ == '__main__':
    if len(sys.argv) != 2 or sys.argv[1] not in ('write', 'check'):
        sys.exit('usage: %s write | check' % sys.argv[0])
    main(sys.argv[1])
