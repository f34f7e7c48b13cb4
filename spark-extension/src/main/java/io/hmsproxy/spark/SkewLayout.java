package io.hmsproxy.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;

/**
 * The layout record `hmsproxy job skew-layout` leaves on a partition (parameter hmsproxy.skew.layout,
 * hmsproxy/features/skew/layout.py) and the rules `hmsproxy.clients.spark.read` prunes by: trusted
 * only while the partition's data files are exactly the recorded ones (name and size), and then a
 * filter naming skewed columns needs only the groups agreeing with it, plus the default group when
 * some wanted value tuple is not a skewed one.
 */
final class SkewLayout {
  static final String PARAMETER = "hmsproxy.skew.layout";
  private static final int FORMAT_VERSION = 1;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One skewed value tuple's files, or (values null) the default group's. */
  private record Group(List<String> values, List<Map.Entry<String, Long>> files, long rows) {}

  private final List<String> columns;
  private final List<Group> groups; // skewed groups, then exactly one default group, last

  private SkewLayout(List<String> columns, List<Group> groups) {
    this.columns = columns;
    this.groups = groups;
  }

  /** The record in a partition's parameters; null when missing, garbled or of another version (layout.from_parameter). */
  static SkewLayout of(Map<String, String> parameters) {
    String text = parameters.get(PARAMETER);
    if (text == null || text.isEmpty()) {
      return null;
    }
    try {
      JsonNode record = JSON.readTree(text);
      if (record.path("version").asInt(-1) != FORMAT_VERSION || !record.path("columns").isArray() || !record.path("groups").isArray()) {
        return null;
      }
      List<String> columns = new ArrayList<>();
      record.get("columns").forEach(c -> columns.add(IndexedScanRule.lower(c.asText())));
      List<Group> groups = new ArrayList<>();
      Set<List<String>> seen = new HashSet<>();
      for (JsonNode g : record.get("groups")) {
        List<String> values = null;
        if (!g.path("values").isNull()) {
          values = new ArrayList<>();
          for (JsonNode v : g.get("values")) {
            values.add(v.asText());
          }
          if (values.size() != columns.size() || !seen.add(values)) {
            return null;
          }
        }
        List<Map.Entry<String, Long>> files = new ArrayList<>();
        for (JsonNode f : g.get("files")) {
          files.add(Map.entry(f.get(0).asText(), f.get(1).asLong()));
        }
        groups.add(new Group(values, files, g.path("rows").asLong(-1)));
      }
      boolean oneDefaultLast =
          !groups.isEmpty() && groups.get(groups.size() - 1).values == null && groups.stream().filter(g -> g.values == null).count() == 1;
      boolean rowsAddUp = groups.stream().mapToLong(Group::rows).sum() == record.path("rows").asLong(-1);
      return columns.isEmpty() || !oneDefaultLast || !rowsAddUp ? null : new SkewLayout(columns, groups);
    } catch (Exception e) {
      return null; // not a record this reader understands: the partition is read whole
    }
  }

  /** Whether these data files, all of a partition's, are exactly the recorded ones (layout.matches_files). */
  boolean describes(List<FileStatus> dataFiles) {
    List<String> listed = new ArrayList<>();
    for (FileStatus f : dataFiles) {
      listed.add(f.getPath().getName() + "\0" + f.getLen());
    }
    List<String> recorded = new ArrayList<>();
    for (Group g : groups) {
      g.files.forEach(f -> recorded.add(f.getKey() + "\0" + f.getValue()));
    }
    listed.sort(null);
    recorded.sort(null);
    return listed.equals(recorded);
  }

  /**
   * The files of the groups that may hold rows with these values (column -> any of its values), or
   * null when no skewed column is named (the layout prunes nothing). Values compare as text, as
   * the job grouped rows (cast to string). As layout.select_groups, generalized to IN lists.
   */
  Set<String> filesFor(Map<String, List<Object>> wanted) {
    List<Set<String>> named = new ArrayList<>();
    boolean any = false;
    for (String c : columns) {
      List<Object> values = wanted.get(c);
      Set<String> texts = null;
      if (values != null) {
        texts = new HashSet<>();
        for (Object v : values) {
          texts.add(String.valueOf(v));
        }
        any = true;
      }
      named.add(texts);
    }
    if (!any) {
      return null;
    }
    Set<String> files = new LinkedHashSet<>();
    Set<List<String>> skewed = new HashSet<>();
    for (Group g : groups) {
      if (g.values != null) {
        skewed.add(g.values);
        if (agrees(g.values, named)) {
          g.files.forEach(f -> files.add(f.getKey()));
        }
      }
    }
    if (someTupleNotSkewed(named, skewed)) {
      groups.get(groups.size() - 1).files.forEach(f -> files.add(f.getKey()));
    }
    return files;
  }

  private static boolean agrees(List<String> values, List<Set<String>> named) {
    for (int i = 0; i < values.size(); i++) {
      if (named.get(i) != null && !named.get(i).contains(values.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** Whether a row matching the filter may be in the default group: a column not named, or a wanted tuple not skewed. */
  private static boolean someTupleNotSkewed(List<Set<String>> named, Set<List<String>> skewed) {
    long tuples = 1;
    for (Set<String> texts : named) {
      if (texts == null) {
        return true;
      }
      tuples *= texts.size();
      if (tuples > skewed.size()) {
        return true; // more wanted tuples than skewed ones: some tuple is not skewed
      }
    }
    List<List<String>> all = new ArrayList<>();
    all.add(List.of());
    for (Set<String> texts : named) {
      List<List<String>> longer = new ArrayList<>();
      for (List<String> prefix : all) {
        for (String t : texts) {
          List<String> tuple = new ArrayList<>(prefix);
          tuple.add(t);
          longer.add(tuple);
        }
      }
      all = longer;
    }
    return !skewed.containsAll(all);
  }
}
