package io.hmsproxy.spark;

import java.util.ArrayList;
import java.util.List;
import scala.jdk.javaapi.CollectionConverters;

/** Scala collections to and from Java's, for Catalyst's signatures. */
final class Scala {
  private Scala() {}

  static <T> scala.collection.immutable.Seq<T> seq(List<T> items) {
    return CollectionConverters.asScala(items).toList();
  }

  static <T> List<T> list(scala.collection.Iterable<T> items) {
    return new ArrayList<>(CollectionConverters.asJavaCollection(items));
  }
}
