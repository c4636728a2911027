# -*- coding: utf-8 -*-
# Copyright (c) 2026 nodewright.bridge contributors
# Apache License 2.0 (see LICENSE)
# Note that this file is PRIVATE to the collection nodewright.bridge: it can change in any release.
# Do not use it from other collections or from standalone plugins and modules.
"""NodeWright documents as the documents a given operator serves, both ways (pure; no I/O).

The v0.15 operator serves only ``skyhook.nvidia.com/v1alpha1`` (kinds ``Skyhook``, ``DeploymentPolicy``); the v0.18-v0.20
operators serve ``nodewright.nvidia.com/v1alpha1`` (``NodeWright``, ``DeploymentPolicy``) and keep the legacy group
read-only. ``to_nodewright`` converts legacy documents as upstream's mirror does; ``to_skyhook`` goes the other way,
which upstream never does (its mirror is one-way), so it refuses what a Skyhook cannot say.

Upstream's rules (NVIDIA/nodewright, the late history stored as NVIDIA/skyhook):

* ``operator/api/v1alpha1/nodewright_conversion.go`` @342baa23 ``Convert_Skyhook_To_NodeWright`` /
  ``Convert_DeploymentPolicy_To_NodeWright`` / ``prepareObjectMeta`` / ``rekeyPrefix``: the same name and spec
  (field by field, nothing dropped; the legacy types of v0.18+ carry drainConfig, not runtimeRequiredCordonAfter or
  stageTimeout), resourceVersion, uid and finalizers cleared, every ``skyhook.nvidia.com/`` annotation and label key
  re-prefixed ``nodewright.nvidia.com/`` with an explicit ``nodewright.nvidia.com/`` key winning (deterministic; the
  earlier @a3232a0b let map order decide). The image is copied as it is.
* ``operator/internal/controller/mirror_controller.go`` @273d50a0 (and @ac35b1c7): the mirror is one-way (legacy to
  new), creates the same-named object stamped ``nodewright.nvidia.com/mirrored-from`` (the legacy name) and
  ``/mirrored-generation``, and backs off from a target whose stamp is missing or names another object: such a
  NodeWright is user-made and the legacy object of its name is left as it is.
* ``operator/api/v1alpha1/legacy_readonly_webhook.go`` @76923cc3 (NVIDIA/nodewright @eb6657d5): a migrated legacy
  object refuses spec and pause/disable edits (creates, deletes, no-op re-applies pass).
* The image: v0.15's ``Packages.UnmarshalJSON`` cuts an image at its first ``:`` (``Packages.Images``,
  ``skyhook_types.go`` @71ca22b8), so a stored legacy object has no tag ("their tags were already stripped on write",
  ``operator/RELEASE_NOTES.md`` @1ae01466, v0.18.0) and its webhook refuses a tag other than the version
  (``skyhook_webhook.go`` @2ff297d4). v0.20 takes a bare repository and refuses any inline tag or digest
  (``nodewright_webhook.go`` @5a158dbc, ``splitImageReference`` of ``nodewright_types.go`` @90d9979d: a ``:`` before
  the last ``/`` is a registry port). So a legacy ``repo:<version>`` becomes ``repo``.
* The fields the legacy group lacks (``cr_schema.NODEWRIGHT_SPEC`` against ``SKYHOOK_SPEC``, v0.15's CRD): a v0.15
  API server prunes them without a word and its operator then behaves as without them.

What the API server sets on a stored object (status, resourceVersion, uid, ...) is dropped either way, so the
documents apply to any cluster. ``conflict`` compares a legacy Skyhook and a NodeWright of the same name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.nodewright.bridge.plugins.module_utils.model import api_generation
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_model
from ansible_collections.nodewright.bridge.plugins.module_utils.model import cr_schema
from ansible_collections.nodewright.bridge.plugins.module_utils.model import duration
from ansible_collections.nodewright.bridge.plugins.module_utils.model.constants import (
    NODEWRIGHT_API_VERSION, NODEWRIGHT_GROUP, SKYHOOK_API_VERSION, SKYHOOK_GROUP)
from ansible_collections.nodewright.bridge.plugins.module_utils.model.quantity import parse_quantity

OLD, NEW = api_generation.SKYHOOK, api_generation.NODEWRIGHT
# (apiVersion, kind) of the input -> kind in the target group
_KINDS = {
    (SKYHOOK_API_VERSION, 'Skyhook'): ('Skyhook', 'NodeWright'),
    (NODEWRIGHT_API_VERSION, 'NodeWright'): ('Skyhook', 'NodeWright'),
    (SKYHOOK_API_VERSION, 'DeploymentPolicy'): ('DeploymentPolicy', 'DeploymentPolicy'),
    (NODEWRIGHT_API_VERSION, 'DeploymentPolicy'): ('DeploymentPolicy', 'DeploymentPolicy'),
}
# metadata the API server sets on a stored object: not part of a document to apply
SERVER_METADATA = ('resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields', 'selfLink',
                   'deletionTimestamp', 'deletionGracePeriodSeconds')
# the mirror's bookkeeping: it describes a NodeWright the mirror made, nothing a Skyhook could carry
MIRROR_STAMPS = (NEW.mirrored_from_annotation, NEW.mirrored_generation_annotation)
# the drain a Skyhook gets: v0.15's, which an unset drainConfig keeps (cr_model.drain_config)
_V015_DRAIN = ('evicts through the eviction API, deletes emptyDir data, evicts pods no controller manages, skips DaemonSet '
               "pods, waits without a timeout, each pod's own grace period")


class DocumentError(ValueError):
    """A document that cannot be converted; the message names it by its position and every field at fault."""


# --------------------------------------------------------------------------- metadata


def rekey(mapping, source, target, source_wins):
    """A copy of the annotations or labels ``mapping`` with every key under ``source.prefix`` under ``target.prefix``.

    ``source_wins``: on a clash (both ``<source>/x`` and ``<target>/x``) the re-prefixed key wins; else the target's
    explicit key does (rekeyPrefix, nodewright_conversion.go @342baa23). Other keys stay as they are.
    """
    if not isinstance(mapping, dict):
        return mapping
    old = source.prefix + '/'
    out = dict((k, v) for k, v in mapping.items() if not str(k).startswith(old))
    for key in sorted(k for k in mapping if str(k).startswith(old)):
        new_key = target.prefix + '/' + key[len(old):]
        if source_wins or new_key not in out:
            out[new_key] = mapping[key]
    return out


def _metadata(doc, source, target):
    """The document's metadata for a new object of the target group (prepareObjectMeta, @342baa23)."""
    metadata = copy.deepcopy(doc.get('metadata'))
    if not isinstance(metadata, dict):
        return metadata
    for field in SERVER_METADATA + ('finalizers',):
        metadata.pop(field, None)
    for field in ('annotations', 'labels'):
        if not isinstance(metadata.get(field), dict):
            continue
        values = dict(metadata[field])
        if target is OLD:
            for stamp in MIRROR_STAMPS:
                values.pop(stamp, None)
        # the nodewright.nvidia.com key wins both ways: to_nodewright as upstream; to_skyhook because it is what the
        # NodeWright's operator acts on (a legacy key on a NodeWright is inert)
        values = rekey(values, source, target, source_wins=target is OLD)
        if values:
            metadata[field] = values
        else:
            metadata.pop(field)
    return metadata


def _documents(docs):
    if isinstance(docs, dict):
        docs = [docs]
    if not isinstance(docs, (list, tuple)):
        raise DocumentError('expected a list of documents, got %s' % type(docs).__name__)
    for index, doc in enumerate(docs):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise DocumentError('document %d: expected a mapping, got %s' % (index, type(doc).__name__))
        key = (doc.get('apiVersion'), doc.get('kind'))
        if key not in _KINDS:
            raise DocumentError('document %d: apiVersion %r kind %r is not a Skyhook or NodeWright CR or a '
                                'DeploymentPolicy of %s or %s' % (index, key[0], key[1], SKYHOOK_GROUP, NODEWRIGHT_GROUP))
        yield index, doc


def _convert(doc, target, spec):
    source = api_generation.by_api_version(doc['apiVersion'])
    converted = dict((k, copy.deepcopy(v)) for k, v in doc.items() if k not in ('status', 'metadata', 'spec'))
    converted['apiVersion'] = target.api_version
    converted['kind'] = _KINDS[(doc['apiVersion'], doc['kind'])][0 if target is OLD else 1]
    if 'metadata' in doc:
        converted['metadata'] = _metadata(doc, source, target)
    if 'spec' in doc:
        converted['spec'] = spec
    return converted


# --------------------------------------------------------------------------- new -> legacy


def _drain_is_v015s(value):
    """Whether ``spec.drainConfig`` drains as v0.15 does (unset, null, or every field at its v0.15-preserving default)."""
    if value is None:
        return True
    if not isinstance(value, dict):
        return False
    try:
        given, default = cr_model.drain_config(value), cr_model.drain_config(None)
    except (TypeError, ValueError):
        return False
    keys = tuple(cr_model.DRAIN_DEFAULTS) + ('timeoutSeconds', 'gracePeriodSeconds')
    return all(given[k] == default[k] for k in keys)


def _drain_settings(value):
    """The settings of a drainConfig that differ from the v0.15 drain, as text ('timeout 10m, force false')."""
    try:
        given, default = cr_model.drain_config(value), cr_model.drain_config(None)
    except (TypeError, ValueError):
        return repr(value)
    shown = ['%s %s' % (k, str(given[k]).lower()) for k in sorted(cr_model.DRAIN_DEFAULTS) if given[k] != default[k]]
    shown += ['%s %s' % (k, value[k]) for k, seconds in (('timeout', 'timeoutSeconds'), ('gracePeriod', 'gracePeriodSeconds'))
              if given[seconds] is not None]
    return ', '.join(shown)


def _zero_duration(value):
    try:
        return duration.parse_go_duration(value) == 0
    except ValueError:
        return False


def _what_changes(path, value, spec):
    """None when dropping the v0.20 field at ``path`` changes nothing the operator does; else what changes."""
    if path == 'spec.drainConfig':
        if _drain_is_v015s(value):
            return None
        return 'the v0.15 operator drains with its fixed rules (%s), not with %s' % (_V015_DRAIN, _drain_settings(value))
    if path == 'spec.runtimeRequiredCordonAfter':
        if not value or not spec.get('runtimeRequired'):
            return None  # the operator respects it only with runtimeRequired
        return ('the v0.15 operator does not cordon a node when its runtime-required taint comes off: the node takes '
                'workloads at once')
    if path.endswith('.stageTimeout'):
        if value is None or _zero_duration(value):
            return None  # unset, or 0 (no time bound), as every v0.15 stage
        return 'the v0.15 operator does not bound a stage: a stage that hangs stays in_progress (not killed after %s)' % value
    return 'the %s Skyhook has no such field' % SKYHOOK_API_VERSION


def v020_fields(spec):
    """``(path, holder, key)`` of each field of a NodeWright spec that a v0.15 Skyhook lacks: ``spec.drainConfig``,
    ``spec.runtimeRequiredCordonAfter``, ``spec.packages.<p>.stageTimeout`` (what ``cr_schema.fields_only_in`` finds
    between NODEWRIGHT_SPEC and SKYHOOK_SPEC; a unit test keeps the two equal)."""
    found = [('spec.' + key, spec, key) for key in ('drainConfig', 'runtimeRequiredCordonAfter') if key in spec]
    packages = spec.get('packages') if isinstance(spec.get('packages'), dict) else {}
    found.extend(('spec.packages.%s.stageTimeout' % key, packages[key], 'stageTimeout') for key in sorted(packages)
                 if isinstance(packages[key], dict) and 'stageTimeout' in packages[key])
    return found


def _image_problems(spec):
    """Images a Skyhook cannot name: v0.15 cuts an image at its first ':' (Packages.Images), so a registry port or a
    digest would be cut off (and its webhook refuses what follows the ':' as a tag other than the version)."""
    packages = spec.get('packages') if isinstance(spec.get('packages'), dict) else {}
    problems = []
    for key in sorted(packages):
        image = packages[key].get('image') if isinstance(packages[key], dict) else None
        if isinstance(image, str) and image.split(':', 1)[0] != cr_model.split_image_reference(image)[0]:
            problems.append("spec.packages.%s.image: the v0.15 operator cuts %r at its first ':' (to %r) and its webhook "
                            "refuses the rest as a tag: a Skyhook cannot name an image with a registry port or a digest"
                            % (key, image, image.split(':', 1)[0]))
    return problems


def _skyhook_spec(spec, drop, warnings):
    """``(spec, image problems, field problems)``: a NodeWright spec as a Skyhook's, the v0.20 fields that change
    nothing removed (and, with ``drop``, the others, one message each in ``warnings``)."""
    spec = copy.deepcopy(spec)
    if not isinstance(spec, dict):
        return spec, [], []
    problems = []
    for path, holder, key in v020_fields(spec):
        change = _what_changes(path, holder[key], spec)
        if change is not None and not drop:
            problems.append('%s: %s' % (path, change))
            continue
        holder.pop(key)
        if change is not None:
            warnings.append('%s dropped: %s' % (path, change))
    return spec, _image_problems(spec), problems


def to_skyhook(docs, drop_v020_fields=False, warnings=None):
    """Copies of ``docs`` as ``skyhook.nvidia.com/v1alpha1`` Skyhook / DeploymentPolicy documents (for v0.15).

    ``docs``: a list of documents (None entries, as an empty YAML document gives, are skipped) or one document.
    Annotation and label keys under ``nodewright.nvidia.com/`` move under ``skyhook.nvidia.com/`` (the
    ``nodewright.nvidia.com`` key wins a clash; the mirror stamps are dropped), finalizers and server fields go.
    The v0.20 fields (``spec.drainConfig``, ``spec.runtimeRequiredCordonAfter``, ``spec.packages.<p>.stageTimeout``)
    are dropped when that changes nothing the operator does (``_what_changes``); any other is refused (DocumentError
    naming each path and what the v0.15 operator would do instead), or with ``drop_v020_fields`` dropped with one
    message each in ``warnings`` (a list). An image with a registry port or a digest is refused (v0.15 cuts it).
    Raises DocumentError for anything that is not a Skyhook, NodeWright or DeploymentPolicy of either group.
    """
    warnings = [] if warnings is None else warnings
    out = []
    for index, doc in _documents(docs):
        spec, images, fields = doc.get('spec'), [], []
        if doc.get('kind') != 'DeploymentPolicy':
            spec, images, fields = _skyhook_spec(spec, drop_v020_fields, warnings)
        if images or fields:
            hint = ('\n(a v0.15 API server drops a v0.20 field without a word: remove it, or pass drop_v020_fields=true to '
                    'drop it with a warning)' if fields else '')
            raise DocumentError('document %d (%s %s) cannot be a %s Skyhook:\n  - %s%s' % (
                index, doc.get('kind'), _name(doc), SKYHOOK_API_VERSION, '\n  - '.join(fields + images), hint))
        out.append(_convert(doc, OLD, spec))
    return out


def _name(doc):
    meta = doc.get('metadata') if isinstance(doc.get('metadata'), dict) else {}
    return meta.get('name') or '<unnamed>'


# --------------------------------------------------------------------------- legacy -> new


def _bare_image(key, pkg, stored, warnings):
    """The v0.20 image of a legacy package (``None``: keep it), or DocumentError.

    A tag equal to the version is left off (v0.15 stored it so: Packages.Images); another tag or a digest is refused,
    as v0.15's and v0.20's webhooks refuse them. ``stored``: read from the API server, which admitted it: the
    repository without whatever tag or digest follows it (the legacy controller drops a tag and pulls
    ``<image>:<version>``), never an error."""
    image = pkg.get('image')
    if not isinstance(image, str):
        return None
    repository, tag, digest = cr_model.split_image_reference(image)
    if stored:
        return repository
    if digest is not None:
        raise DocumentError('spec.packages.%s.image: %r carries a digest; a NodeWright takes a bare repository (%r) and '
                            'the digest in containerSHA' % (key, image, repository))
    if tag is None:
        return None
    if tag != pkg.get('version'):
        raise DocumentError('spec.packages.%s.image: tag %r of %r is not the version %r (the v0.15 webhook refuses it, '
                            'v0.20 takes no tag: the version supplies it)' % (key, tag, repository, pkg.get('version')))
    warnings.append('spec.packages.%s.image: %r becomes %r: a NodeWright takes a bare repository (its version %r '
                    'supplies the tag)' % (key, image, repository, tag))
    return repository


def nodewright_spec(spec, stored=False, warnings=None):
    """A legacy Skyhook's spec as a NodeWright's (convertSkyhookSpec @342baa23: every field; the image bare)."""
    spec = copy.deepcopy(spec)
    warnings = [] if warnings is None else warnings
    packages = spec.get('packages') if isinstance(spec, dict) else None
    for key in sorted(packages) if isinstance(packages, dict) else ():
        if isinstance(packages[key], dict):
            image = _bare_image(key, packages[key], stored, warnings)
            if image is not None:
                packages[key]['image'] = image
    return spec


def to_nodewright(docs, warnings=None):
    """Copies of ``docs`` as ``nodewright.nvidia.com/v1alpha1`` NodeWright / DeploymentPolicy documents, as the v0.18+
    mirror converts a legacy object (nodewright_conversion.go @342baa23): the same name and spec, annotation and label
    keys under ``skyhook.nvidia.com/`` moved under ``nodewright.nvidia.com/`` (an explicit ``nodewright.nvidia.com/`` key
    wins), finalizers and server fields dropped; an image ``repo:<version>`` becomes ``repo`` (one message in
    ``warnings``, a list). NodeWright documents come out as they are, but for that metadata. DocumentError for an
    image with another tag or a digest, and for anything that is not a CR or DeploymentPolicy of either group."""
    warnings = [] if warnings is None else warnings
    out = []
    for index, doc in _documents(docs):
        spec = copy.deepcopy(doc.get('spec'))
        if doc.get('kind') == 'Skyhook':
            notes = []
            try:
                spec = nodewright_spec(spec, warnings=notes)
            except DocumentError as exc:
                raise DocumentError('document %d (Skyhook %s): %s' % (index, _name(doc), exc))
            warnings.extend('document %d (Skyhook %s): %s' % (index, _name(doc), note) for note in notes)
        out.append(_convert(doc, NEW, spec))
    return out


# --------------------------------------------------------------------------- the same name in both groups


class _Read(object):
    """A duration or quantity as its value (``30s`` equals ``0.5m``, ``500m`` equals ``0.5``), shown as written."""

    __hash__ = None

    def __init__(self, value, text):
        self.value = value
        self.text = text

    def __eq__(self, other):
        return isinstance(other, _Read) and self.value == other.value

    def __ne__(self, other):
        return not self == other

    def __repr__(self):
        return repr(self.text)


def _read_as(mapping, keys, parse):
    for key in keys:
        try:
            mapping[key] = _Read(parse(mapping[key]), mapping[key])
        except (KeyError, TypeError, ValueError):
            pass


def _pruned(value):
    """``value`` without None, '', {} and [] (what Go's omitempty writes as absent), at any depth."""
    if isinstance(value, dict):
        pruned = dict((k, _pruned(v)) for k, v in value.items())
        return dict((k, v) for k, v in pruned.items() if v not in (None, '', {}, []))
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def comparable_spec(spec):
    """A NodeWright spec as the operator reads it, for comparing two: the v0.20 defaults, a package's name its key,
    durations and quantities as values, a drainConfig that drains as none does removed, empty values removed."""
    spec = cr_schema.apply_defaults(copy.deepcopy(spec) if isinstance(spec, dict) else {}, cr_schema.NODEWRIGHT_SPEC)
    if _drain_is_v015s(spec.get('drainConfig')):
        spec.pop('drainConfig', None)
    elif isinstance(spec.get('drainConfig'), dict):
        _read_as(spec['drainConfig'], ('timeout', 'gracePeriod'), duration.parse_go_duration)
    for key, pkg in (spec.get('packages') or {}).items() if isinstance(spec.get('packages'), dict) else ():
        if not isinstance(pkg, dict):
            continue
        pkg['name'] = pkg.get('name') or key
        _read_as(pkg, ('gracefulShutdown', 'stageTimeout'), duration.parse_go_duration)
        if isinstance(pkg.get('resources'), dict):
            _read_as(pkg['resources'], sorted(pkg['resources']), parse_quantity)
    return _pruned(spec)


def first_difference(left, right, path='spec'):
    """The path of the first place (keys in sorted order) where ``left`` and ``right`` differ, or None."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right), key=str):
            child = '%s.%s' % (path, key)
            if key not in left or key not in right:
                return child
            found = first_difference(left[key], right[key], child)
            if found:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list):
        for index in range(max(len(left), len(right))):
            if index >= len(left) or index >= len(right):
                return '%s[%d]' % (path, index)
            found = first_difference(left[index], right[index], '%s[%d]' % (path, index))
            if found:
                return found
        return None
    return None if left == right else path


def _at(spec, path):
    value = spec
    for part in path.replace('[', '.[').split('.')[1:]:
        if part.startswith('['):
            index = int(part[1:-1])
            value = value[index] if isinstance(value, list) and index < len(value) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
    return value


def _shown(value):
    text = '(absent)' if value is None else repr(value)
    return text if len(text) <= 60 else text[:57] + '...'


def conflict(legacy_doc, nodewright_doc):
    """None, or ``{'message', 'skyhook', 'nodewright', 'path'}``: the two objects (``<plural>.<group>/<name>``), the
    first spec key where they differ, and a message naming all three and what to do.

    ``legacy_doc``: the ``skyhook.nvidia.com`` Skyhook of a name, as the API returns it; ``nodewright_doc``: the
    ``nodewright.nvidia.com`` NodeWright of the same name. Not a conflict: a NodeWright that is the legacy object's
    mirror (``nodewright.nvidia.com/mirrored-from`` is the name; mirror_controller.go @273d50a0), a legacy object
    being deleted, and two specs that say the same once the legacy one is converted (``nodewright_spec``, the image as
    its operator reads it) and both are read as the operator reads them (``comparable_spec``). Otherwise the v0.18+
    operator reconciles the NodeWright and leaves the other alone (its mirror backs off), so what is meant is unclear.
    """
    name = _name(nodewright_doc)
    annotations = (nodewright_doc.get('metadata') or {}).get('annotations') or {}
    if annotations.get(NEW.mirrored_from_annotation) == name or (legacy_doc.get('metadata') or {}).get('deletionTimestamp'):
        return None
    legacy = comparable_spec(nodewright_spec(legacy_doc.get('spec'), stored=True))
    current = comparable_spec(nodewright_doc.get('spec'))
    path = first_difference(legacy, current)
    if path is None:
        return None
    old = '%s/%s' % (OLD.crd_name, name)
    new = '%s/%s' % (NEW.crd_name, name)
    message = ('%s and %s are two objects of the same name: the NodeWright is not the Skyhook\'s mirror (no %s: %s) and '
               'their specs differ at %s (%s in the Skyhook, %s in the NodeWright). The v0.18+ operator reconciles the '
               'NodeWright and leaves the Skyhook alone, so which one is meant is unclear; nothing was written. Delete the '
               'one not meant (kubectl delete %s, or kubectl delete %s), or make the NodeWright the mirror: delete it, and '
               'the operator\'s mirror controller re-creates it from the Skyhook (it imports every legacy object when it '
               'starts)' % (old, new, NEW.mirrored_from_annotation, name, path, _shown(_at(legacy, path)),
                            _shown(_at(current, path)), old, new))
    return {'message': message, 'skyhook': old, 'nodewright': new, 'path': path}
