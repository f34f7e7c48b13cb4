package io.hmsproxy.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The build record beside an index partition's files (_hmsproxy_index.json, written by
 * hmsproxy/features/indexes/builds.py) and the staleness rule the proxy and `hmsproxy lookup` use:
 * an index partition is trusted only when its directory holds exactly the index files the record
 * names, and serves a base partition only when the digest of that partition's data files (name,
 * size, modification time in ms) equals the digest recorded at build time.
 */
final class IndexBuild {
  static final String MANIFEST = "_hmsproxy_index.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  final String partition;
  final Map<String, String> base;
  final List<Map.Entry<String, Long>> indexFiles;

  private IndexBuild(String partition, Map<String, String> base, List<Map.Entry<String, Long>> indexFiles) {
    this.partition = partition;
    this.base = base;
    this.indexFiles = indexFiles;
  }

  /** The build of the index partition at `location`, or null where there is none to trust. */
  static IndexBuild read(Path location, Configuration conf) throws IOException {
    FileSystem fs = location.getFileSystem(conf);
    JsonNode record;
    try (InputStream in = fs.open(new Path(location, MANIFEST))) {
      record = JSON.readTree(in);
    } catch (FileNotFoundException e) {
      return null;
    }
    JsonNode listed = record.get("index_files");
    if (listed == null || !listed.isArray() || !record.hasNonNull("partition") || !record.has("base")) {
      return null; // older builds name no files: trusted by no one (builds.py)
    }
    Map<String, String> base = new HashMap<>();
    Iterator<Map.Entry<String, JsonNode>> fields = record.get("base").fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> f = fields.next();
      base.put(f.getKey(), f.getValue().asText());
    }
    List<Map.Entry<String, Long>> files = new ArrayList<>();
    for (JsonNode f : listed) {
      files.add(Map.entry(f.get(0).asText(), f.get(1).asLong()));
    }
    return new IndexBuild(record.get("partition").asText(), base, files);
  }

  /** Whether a listing of the index partition's directory holds exactly the files this build wrote. */
  boolean describes(List<FileStatus> dataFiles) {
    if (dataFiles.size() != indexFiles.size()) {
      return false;
    }
    for (int i = 0; i < dataFiles.size(); i++) {
      FileStatus f = dataFiles.get(i);
      Map.Entry<String, Long> expected = indexFiles.get(i);
      if (!f.getPath().getName().equals(expected.getKey()) || f.getLen() != expected.getValue()) {
        return false;
      }
    }
    return true;
  }

  boolean freshFor(String basePartition, String currentDigest) {
    return currentDigest.equals(base.get(basePartition));
  }

  /** The data files of a directory (no '_' or '.' names, no directories), by name; null if it has visible subdirectories. */
  static List<FileStatus> dataFiles(Path dir, Configuration conf) throws IOException {
    FileSystem fs = dir.getFileSystem(conf);
    FileStatus[] listed;
    try {
      listed = fs.listStatus(dir);
    } catch (FileNotFoundException e) {
      return new ArrayList<>();
    }
    List<FileStatus> files = new ArrayList<>();
    for (FileStatus f : listed) {
      String name = f.getPath().getName();
      if (name.startsWith("_") || name.startsWith(".")) {
        continue;
      }
      if (f.isDirectory()) {
        return null; // Spark would read below it; the index's listing does not: not ours to prune
      }
      files.add(f);
    }
    files.sort(Comparator.comparing(f -> f.getPath().getName()));
    return files;
  }

  /**
   * The data files Spark itself would read of a listing: not those a copy is still writing
   * (`hadoop fs -put`'s `name._COPYING_`, InMemoryFileIndex's rule). They stay in the listing the
   * digest is made of, as builds.py counts them: a copy that lands changes the digest anyway.
   */
  static List<FileStatus> readBySpark(List<FileStatus> dataFiles) {
    return dataFiles.stream().filter(f -> !f.getPath().getName().endsWith("._COPYING_")).toList();
  }

  /** builds.py's digest: sha256 of Python's json.dumps([[name, size, mtime_ms], ...]), 32 hex digits. */
  static String digest(List<FileStatus> dataFiles) {
    StringBuilder text = new StringBuilder("[");
    for (int i = 0; i < dataFiles.size(); i++) {
      FileStatus f = dataFiles.get(i);
      if (i > 0) {
        text.append(", ");
      }
      text.append('[');
      pythonJsonString(text, f.getPath().getName());
      text.append(", ").append(f.getLen()).append(", ").append(f.getModificationTime()).append(']');
    }
    text.append(']');
    try {
      byte[] hash = MessageDigest.getInstance("SHA-256").digest(text.toString().getBytes(StandardCharsets.US_ASCII));
      StringBuilder hex = new StringBuilder();
      for (int i = 0; i < 16; i++) {
        hex.append(String.format("%02x", hash[i] & 0xff));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A string as Python's json.dumps writes it (ensure_ascii: everything beyond ASCII as \\uXXXX). */
  static void pythonJsonString(StringBuilder out, String s) {
    out.append('"');
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20 || c > 0x7e) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
